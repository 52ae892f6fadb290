#!/usr/bin/env bash
# Install a built wheel into a fresh venv whose PATH has no C compiler, then run
# .ci/wheel_smoke.py outside the checkout: first on the base install (no extras, no torch:
# every registered env plays), then with the train extra (the quickstart trains).
# Usage: .ci/wheel_smoke.sh WHEEL VENV
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
wheel=$(realpath "$1")
venv=$(realpath -m "$2")
rm -rf "$venv" "$venv-tools"
python3 -m venv "$venv"
# The tools of the usual bin folders, less every C/C++ compiler, preprocessor and linker.
mkdir -p "$venv-tools"
for folder in /usr/local/bin /usr/bin /bin; do
    for tool in "$folder"/*; do
        name=$(basename "$tool")
        case "$name" in
            cc | c++ | c89* | c99* | gcc* | g++* | clang* | cpp* | ld | ld.* | *-gcc* | *-g++* | *-cc | *-c++ | *-ld) continue ;;
        esac
        [ -e "$venv-tools/$name" ] || ln -s "$tool" "$venv-tools/$name"
    done
done
export PATH="$venv/bin:$venv-tools"
cd "$(mktemp -d)"
pip install -q "$wheel"
python "$repo/.ci/wheel_smoke.py" envs
pip install -q torch==2.13.0                  # the pinned build first, as the README does
pip install -q "${wheel}[train]" torch==2.13.0
python "$repo/.ci/wheel_smoke.py" train
