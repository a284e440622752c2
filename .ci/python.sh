#!/usr/bin/env bash
# CI for the Python package (crates/cudnnlog-py): build and install it from
# source into a virtual environment, with pytest and PySpark, then run its
# tests, the PySpark example on a local Spark included. Run from anywhere;
# needs python3, cargo and network access to PyPI and crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/py-venv
if ! python3 -m venv "$venv"; then
    # Debian's python3 without its venv module.
    apt-get update
    apt-get install -y python3-venv
    python3 -m venv "$venv"
fi
py="$venv/bin/python"

# Spark needs a Java runtime (17 or 21 for Spark 4).
if ! command -v java >/dev/null 2>&1; then
    apt-get update
    apt-get install -y openjdk-17-jre-headless
fi
java -version

# fsspec: the example's route for remote files (its tests read fsspec's
# in-memory store).
"$py" -m pip install --disable-pip-version-check --quiet pytest pyspark fsspec
# Always rebuild the package from this tree (pip builds it with maturin).
"$py" -m pip install --disable-pip-version-check --force-reinstall --no-deps ./crates/cudnnlog-py

# A missing PySpark, Java or fsspec fails the Spark tests here instead of
# skipping them. The Spark tests include a 3 GiB log, written to a temporary
# directory and deleted after (it needs 3.1 GB of free disk there).
CUDNNLOG_REQUIRE_SPARK=1 "$py" -m pytest crates/cudnnlog-py/tests -q
