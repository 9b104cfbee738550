#!/usr/bin/env bash
# Installs the Debian packages relmem needs, only those missing. Idempotent; needs root only when something is missing.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config ccache
  libeigen3-dev libsqlite3-dev nlohmann-json3-dev pybind11-dev libgtest-dev libcurl4-openssl-dev
  python3-dev python3-venv python3-pip python3-setuptools python3-wheel python3-pybind11
  python3-numpy python3-pytest python3-tqdm python3-matplotlib python3-jinja2 python3-typing-extensions
  python3-nbclient python3-nbformat python3-ipykernel jupyter-nbconvert
  clang libfuzzer-14-dev libclang-rt-14-dev
  iso-codes wordnet-base
  libpq5 postgresql mariadb-server
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from another distribution of Node.js (whose nodejs bundles npm): check the commands.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "relmem: missing Debian packages: ${missing[*]}" >&2
  echo "relmem: run as root or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "relmem: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
