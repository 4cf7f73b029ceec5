"""Graph surgery: the whole-model edits people ask for most, each one undoable command.

* :mod:`~editor.surgery.precision`: fp32 -> fp16 / bf16 that follows the operator schemas;
* :mod:`~editor.surgery.merge`: chain two models (renaming clashes, reconciling opsets);
* :mod:`~editor.surgery.io_types`: change a graph input's or output's element type;
* :mod:`~editor.surgery.weights_inputs`: initializer <-> graph input;
* :mod:`~editor.surgery.patterns`: find a pattern of nodes and replace every occurrence.

Each command checks its preconditions before it changes anything.
"""
