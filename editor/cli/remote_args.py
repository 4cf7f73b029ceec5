"""``--backend ray --cluster ADDRESS [--num-gpus N] [--workers N]`` for ``run``, ``compare``
and ``reduce``: the same command, its runs on a Ray cluster.

``--backend ray`` says *where* the runs happen; *what* runs them on the cluster is the
usual choice (onnxruntime with ``--providers``, falling back to the reference evaluator,
or ``--vs-backend`` for compare's side B). ``--cluster`` defaults to
``ONNX_STUDIO_RAY_ADDRESS`` / ``RAY_ADDRESS``; the address is never printed (see
:mod:`editor.runtime.remote.config`). ``--workers``: run hosts for the fan-out of compare
(its two sides at once) and reduce (bisection steps at once); default 2 and 4.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from editor.errors import StudioError

__all__ = ["add_remote_arguments", "open_pool", "open_runner"]

REMOTE = "ray"


def add_remote_arguments(p: argparse.ArgumentParser, *, workers: int | None = None) -> None:
    """Add ``ray`` to ``--backend``'s choices and the cluster options."""
    for action in p._actions:  # noqa: SLF001 - argparse has no public way to extend choices
        if "--backend" in action.option_strings and action.choices is not None:
            action.choices = [*action.choices, REMOTE]
            action.help = (action.help or "") + "; 'ray': run on a Ray cluster (--cluster)"
    group = p.add_argument_group("running on a cluster (--backend ray)")
    group.add_argument("--cluster", metavar="ADDRESS",
                       help="Ray cluster: ray://HOST:10001, HOST:6379 or 'auto' "
                            "(default: $ONNX_STUDIO_RAY_ADDRESS or $RAY_ADDRESS)")
    group.add_argument("--num-gpus", type=float, default=None, metavar="N",
                       help="GPUs each run host reserves on the cluster (default 0)")
    if workers is not None:
        group.add_argument("--workers", type=int, default=workers, metavar="N",
                           help=f"run hosts working at once on the cluster (default {workers})")


def _usage(message: str) -> StudioError:
    error = StudioError(message)
    error.exit_code = 2
    return error


def _config(args: argparse.Namespace) -> Any:
    from editor.runtime.remote.config import ClusterConfig, require_ray

    if args.backend != REMOTE:
        if args.cluster or args.num_gpus is not None:
            raise _usage("--cluster and --num-gpus go with --backend ray")
        return None
    require_ray()  # "install onnx-studio[ray]" before anything else
    config = ClusterConfig.from_env(args.cluster, num_gpus=args.num_gpus)
    if config.address is None:
        raise _usage("--backend ray needs a cluster: give --cluster ADDRESS or set ONNX_STUDIO_RAY_ADDRESS")
    args.backend = None  # on the cluster, the usual engine choice applies
    return config


def open_runner(args: argparse.Namespace) -> Any:
    """A RayRunner for ``--backend ray`` (``args.backend`` then becomes None), else None."""
    config = _config(args)
    if config is None:
        return None
    from editor.runtime.remote import RayRunner

    return RayRunner(config)


def run_with_pool(args: argparse.Namespace, body: Callable[[argparse.Namespace, Any], int]) -> int:
    """``body(args, pool)`` with the ``--backend ray`` pool (None when local), closed after."""
    pool = open_pool(args)
    try:
        return body(args, pool)
    finally:
        if pool is not None:
            pool.close()


def open_pool(args: argparse.Namespace) -> Any:
    """A started RayPool of ``--workers`` hosts for ``--backend ray``, else None."""
    config = _config(args)
    if config is None:
        return None
    if args.workers < 1:
        raise _usage(f"--workers {args.workers}: give at least 1")
    from editor.runtime.remote import RayPool

    pool = RayPool(config, args.workers)
    try:
        pool.start()
    except BaseException:
        pool.close()
        raise
    return pool
