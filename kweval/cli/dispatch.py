"""The `kweval` parser, the dispatch to each command's module, and the end of the process.

Each `cmd_*` module registers its own arguments; `common` holds what they
share.  A usage, data, output or missing-extra fault is one `kweval:` line
and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import NoReturn

from kweval.cli import (
    cmd_compare,
    cmd_convert,
    cmd_describe,
    cmd_embed,
    cmd_evaluate,
    cmd_export,
    cmd_extract,
    cmd_failures,
    cmd_gap,
    cmd_judgments,
    cmd_parse,
    cmd_report,
    cmd_runs,
    cmd_slices,
    cmd_synth,
)
from kweval.cli.common import USAGE_ERROR, UsageError, epilog
from kweval.cli.fast import KeyphraseUsageError
from kweval.extras import MissingExtra, missing_extra
from kweval.io.output import OutputError, os_reason
from kweval.messages import line, say

__all__ = ["COMMANDS", "build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """The `kweval` parser with every command's subparser (in the order `--help` lists them)."""
    from kweval import __version__

    parser = argparse.ArgumentParser(
        prog="kweval",
        description="Evaluate keyword-extraction models against ranked ground-truth keywords.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kweval {__version__}")

    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    cmd_evaluate.add_parser(sub, epilog())
    cmd_embed.add_parsers(sub)
    cmd_convert.add_parser(sub)
    cmd_synth.add_parser(sub)
    cmd_extract.add_parser(sub)
    cmd_export.add_parser(sub)
    cmd_describe.add_parser(sub)
    cmd_failures.add_parser(sub)
    cmd_judgments.add_parser(sub)
    cmd_parse.add_parser(sub)
    cmd_report.add_parser(sub)
    cmd_compare.add_parser(sub)
    cmd_runs.add_parser(sub)
    cmd_slices.add_parser(sub)
    cmd_gap.add_parser(sub)
    return parser


COMMANDS = {
    "evaluate": cmd_evaluate.cmd_evaluate,
    "convert": cmd_convert.cmd_convert,
    "embed": cmd_embed.cmd_embed,
    "cache": cmd_embed.cmd_cache,
    "synth": cmd_synth.cmd_synth,
    "extract": cmd_extract.cmd_extract,
    "export": cmd_export.cmd_export,
    "describe": cmd_describe.cmd_describe,
    "failures": cmd_failures.cmd_failures,
    "judgments": cmd_judgments.cmd_judgments,
    "parse": cmd_parse.cmd_parse,
    "report": cmd_report.cmd_report,
    "compare": cmd_compare.cmd_compare,
    "runs": cmd_runs.cmd_runs,
    "slices": cmd_slices.cmd_slices,
    "gap": cmd_gap.cmd_gap,
}


def main(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the command; a usage, data, output or missing-extra fault is one line and exit 2."""
    from kweval.data import DatasetError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return COMMANDS[args.command](args)
    except (UsageError, DatasetError, KeyphraseUsageError) as exc:
        say("error", exc)
        return USAGE_ERROR
    except (MissingExtra, OutputError) as exc:  # an optional feature without its extra, or an unusable output path
        say(exc)
        return USAGE_ERROR
    except ImportError as exc:  # an optional package imported directly (not through extras.require)
        missing = missing_extra(exc, args.command)
        if missing is None:
            raise
        say(missing)
        return USAGE_ERROR
    except BrokenPipeError:  # e.g. `kweval evaluate | head`
        return 0


def run() -> NoReturn:
    """The `kweval` console script and `python -m kweval`: `main()` in a process of its own, then exit."""
    # The cyclic GC's full passes walk every live object.  Freezing moves the
    # imported modules (pandas alone is ~100k objects, none of them garbage)
    # into a generation it never walks.
    gc.freeze()
    exit_without_teardown(main())


def exit_without_teardown(status: int) -> NoReturn:
    """Flush the standard streams and end the process, skipping the interpreter's teardown.

    Everything kweval writes is closed by the time `main()` returns (output
    files, the embedding store's connection), so the teardown would only free,
    one by one, the objects of the tables just evaluated (measured in
    docs/scaling.md), and the OS frees them at once.  mypy ends its runs the same
    way.  Not for `main()` called in-process: only the console script uses it.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
        except OSError as exc:  # e.g. stdout on a full device
            name = "stdout" if stream is sys.stdout else "stderr"
            try:
                sys.stderr.write(line(name, f"writing failed ({os_reason(exc)})") + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            status = USAGE_ERROR
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
