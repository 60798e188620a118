#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what `make test` and CI need on Debian 12, and only what is
# missing: nothing is downloaded (not even the package lists) when every
# package is already there. Needs root (or sudo) only when installing.
#
#   cmake make gcc g++ libc6-dev pkg-config   build, consumer tests
#   clang libclang-rt-14-dev                  ASan/UBSan/TSan, libFuzzer
#   clang-format                              the style test
#   valgrind                                  the memcheck stage
#   gcc/g++-mingw-w64-x86-64 wine64           the Windows stage
#   lua5.4 liblua5.4-dev luajit libluajit-5.1-dev luarocks   the Lua module
set -euo pipefail

pkgs=(cmake make gcc g++ libc6-dev pkg-config clang libclang-rt-14-dev
      clang-format valgrind gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64
      lua5.4 liblua5.4-dev luajit libluajit-5.1-dev luarocks)
# wine64 alone runs 64-bit console programs; its recommendations (32-bit
# wine, fonts, sound) are not needed.
bare_pkgs=(wine64)

missing=()
bare_missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
for p in "${bare_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || bare_missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ ${#bare_missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup-deps: missing ${missing[*]} ${bare_missing[*]};" \
         "run this script as root to install them" >&2
    exit 1
  fi
fi
echo "setup-deps: installing ${missing[*]} ${bare_missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ${#bare_missing[@]} -gt 0 ]; then
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${bare_missing[@]}" >/dev/null
fi
