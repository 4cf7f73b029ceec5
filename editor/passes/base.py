"""What a pass is: a function from the document to a previewable, undoable plan.

A pass never edits the document itself. ``plan(doc)`` looks at the model and returns a
:class:`PassPlan`: the list of changes in words (for the preview dialog) and one
:class:`~editor.document.Command` that makes them. Executing that command applies the pass
as a single undo step. ``run_to_fixed_point`` repeats a pass until it finds nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from editor.document import Command, Document, FunctionCommand, Transaction


@dataclass
class PassPlan:
    name: str
    changes: list[str] = field(default_factory=list)  # one line per change, for the preview
    command: Command | None = None  # None when there is nothing to do
    warnings: list[str] = field(default_factory=list)  # what the pass could not do, and why
    #: the optimizer's report (op counts before/after) when the plan comes from it
    report: object | None = None
    #: the whole transformed model, when the pass computed one (a safety check runs it)
    result_model: object | None = None

    @property
    def empty(self) -> bool:
        return self.command is None


Planner = Callable[[Document], PassPlan]


def plan_from(name: str, changes: list[str], fn: Callable[[Document, Transaction], None],
              warnings: list[str] | None = None) -> PassPlan:
    if not changes:
        return PassPlan(name, [], None, warnings or [])
    return PassPlan(name, changes, FunctionCommand(name, fn), warnings or [])


def run_to_fixed_point(doc: Document, planner: Planner, *, max_rounds: int = 50) -> list[PassPlan]:
    """Apply ``planner`` until it plans nothing; each round is one undo step."""
    done = []
    for _ in range(max_rounds):
        plan = planner(doc)
        if plan.empty:
            break
        doc.execute(plan.command)
        done.append(plan)
    return done
