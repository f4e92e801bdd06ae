#!/usr/bin/env bash
# Installs ZITADEL's Python SDK (zitadel-client on PyPI, the version test/sdk.python.test.ts
# runs) into a virtual environment in a cache folder outside the repository, so that the test
# finds it ready and downloads nothing while it runs. Idempotent: does nothing when the venv's
# python already imports that version. Prints the venv's python path last.
#   ZITADEL_PYTHON_SDK_VENV  the venv folder (default: ${XDG_CACHE_HOME:-~/.cache}/identity-gateway/zitadel-client-<version>)
set -euo pipefail

VERSION=4.1.9
VENV="${ZITADEL_PYTHON_SDK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/identity-gateway/zitadel-client-$VERSION}"
PY="$VENV/bin/python"

installed() { # the version the venv imports, or nothing
  [ -x "$PY" ] && "$PY" -c 'import importlib.metadata as m, zitadel_client; print(m.version("zitadel-client"))' 2>/dev/null || true
}

command -v python3 >/dev/null || { echo "install-python-sdk: python3 is required" >&2; exit 1; }

if [ "$(installed)" = "$VERSION" ]; then
  echo "install-python-sdk: $VENV already has zitadel-client $VERSION"
  echo "$PY"
  exit 0
fi

echo "install-python-sdk: python3 -m venv $VENV; pip install zitadel-client==$VERSION"
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
"$PY" -m pip install --quiet --disable-pip-version-check "zitadel-client==$VERSION"
got="$(installed)"
[ "$got" = "$VERSION" ] || { echo "install-python-sdk: the venv imports zitadel-client '$got', not $VERSION" >&2; exit 1; }
echo "install-python-sdk: installed zitadel-client $VERSION in $VENV"
echo "$PY"
