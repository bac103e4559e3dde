"""``harness export-tau2 RUN OUT``: a tau3 run as a τ-bench leaderboard submission.

A command the tau3 adapter contributes to the CLI (``Tau3Adapter.commands()``);
the conversion is ``export.py``. It writes what tau2-bench v1.0.1's
``tau2 submit prepare`` writes, without its questions: what prepare asks for is
given as flags.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

HELP = "write a tau3 run as a τ-bench leaderboard submission (tau2 submit prepare's layout)"

DESCRIPTION = """\
Writes OUT/<model>_<organization>_<date>/submission.json and trajectories/<domain>_results.json
(one tau2-bench Results per domain), as tau2-bench v1.0.1's `tau2 submit prepare` does;
pass^k are computed by tau2-bench's own code. Check the result with `tau2 submit validate`.

A trial tau2-bench's runner binned as an infrastructure error (every attempt void) is
written as its runner writes it (no messages, termination infrastructure_error), which
tau2-bench's own checks count as a trial; their number is said. --strict refuses them.

Refused: a run that is not tau3 (the original task set cannot be submitted), fewer than
4 trials, a domain whose base tasks are not all there with every trial scored, the
scripted user, the stub judge (where it graded a record), the built-in oracle/null agents, an OUT
that is not empty. --submission-type has no default: the harness cannot know whether the
model was trained on τ-bench tasks or rewards, which the rules make "custom"; a run with
a test-time strategy, non-standard environment feedback, malformed_calls: continue, tools
in the prompt, bounded tool arguments, a forced tool_choice or non-default step/error
limits is refused as "standard".
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("run_dir", type=Path, metavar="RUN", help="a run folder of benchmark tau3")
    parser.add_argument("out_dir", type=Path, metavar="OUT", help="a new or empty folder")
    parser.add_argument(
        "--submission-type",
        required=True,
        choices=("standard", "custom"),
        help="standard: a general-purpose model in the standard scaffold; custom: a model "
        "trained on τ-bench tasks or rewards, or a modified scaffold (the leaderboard's rules)",
    )
    parser.add_argument(
        "--organization", required=True, help="the organization that developed the model"
    )
    parser.add_argument("--email", required=True, help="contact email for the submission")
    parser.add_argument(
        "--model-name",
        help="model name on the leaderboard (default: the run's model, which is what "
        "`tau2 submit validate` expects; another name is reported by it as a warning)",
    )
    parser.add_argument(
        "--submitting-organization", help="who ran the evaluation (default: --organization)"
    )
    parser.add_argument("--contact-name", help="name of the submitter")
    parser.add_argument("--github", help="GitHub user name of the submitter")
    parser.add_argument(
        "--notes", help="text appended to methodology.notes (custom submissions: describe it)"
    )
    parser.add_argument(
        "--reference",
        nargs=2,
        action="append",
        metavar=("TITLE", "URL"),
        default=[],
        help="a link for the submission's references (repeatable)",
    )
    parser.add_argument("--reasoning-effort", help="e.g. high, medium, low, none")
    parser.add_argument("--not-new", action="store_true", help="do not highlight the model as new")
    parser.add_argument(
        "--submission-date",
        type=date.fromisoformat,
        help="YYYY-MM-DD (default: today, as tau2 submit prepare uses)",
    )
    parser.add_argument(
        "--domain",
        action="append",
        default=[],
        help="export only this domain (repeatable; default: every domain the run has)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="the tau2-bench v1.0.1 checkout (default: the run's --data-dir for tau3)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse a run with a binned simulation (default: export it as tau2-bench does)",
    )


def run(args: argparse.Namespace) -> int:
    from .export import SubmissionFields, export_tau2

    fields = SubmissionFields(
        model_organization=args.organization,
        email=args.email,
        submission_type=args.submission_type,
        model_name=args.model_name,
        submitting_organization=args.submitting_organization,
        contact_name=args.contact_name,
        github=args.github,
        notes=args.notes,
        references=tuple((title, url) for title, url in args.reference),
        reasoning_effort=args.reasoning_effort,
        is_new=not args.not_new,
        submission_date=args.submission_date,
    )
    exported = export_tau2(
        args.run_dir,
        args.out_dir,
        fields,
        data_dir=args.data_dir,
        domains=args.domain,
        strict=args.strict,
    )
    folder = exported.folder
    binned = (
        f"; {exported.binned} binned simulation(s) written as tau2-bench's runner writes them "
        "(infrastructure_error, counted as trials, left out of pass^k)"
        if exported.binned
        else ""
    )
    print(
        f"wrote {folder} (submission.json and trajectories/); it passed tau2-bench's trajectory "
        f"checks{binned}; next: tau2 submit validate {folder}",
        file=sys.stderr,
    )
    return 0
