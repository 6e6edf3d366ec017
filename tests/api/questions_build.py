"""The build's assets of the questions asked, alone, in a real Dagster run (in its own process, for the tests):

    python -m tests.api.questions_build

The raw table (with the object store's mirror when REUSE_DATA_PUBLISH_TO names one), the dbt
models over it and the report of unanswered questions: what a whole build does with them, in
seconds rather than minutes. Prints what the run materialised and why it failed, exits 1 if it did.
"""

from __future__ import annotations

import sys

from foundations.settings import load_settings

QUESTION_ASSETS = (
    "raw/asked_questions",
    "staging/stg_asked_questions",
    "marts/asked_questions",
    "reports/unanswered_questions",
)


def main() -> int:
    from dagster import AssetKey

    from pipelines.build import run_build

    outcome = run_build(
        load_settings(), report=print, asset_selection=[AssetKey.from_user_string(key) for key in QUESTION_ASSETS]
    )
    print("\n".join(outcome.errors + outcome.failed_checks))
    return 0 if outcome.success else 1


if __name__ == "__main__":
    sys.exit(main())
