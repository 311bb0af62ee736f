#!/usr/bin/env bash
# Formats the project's Swift code with the toolchain's swift-format (.swift-format at the root).
# Generated code (Sources/FleetProto, DrivingSideCountries.swift) is left as its generator wrote it.
set -euo pipefail
cd "$(dirname "$0")/.."
find Sources Tests Benchmarks/Sources -name '*.swift' -not -path 'Sources/FleetProto/*' \
  -not -name 'DrivingSideCountries.swift' -print0 |
  xargs -0 swift format --in-place --configuration .swift-format
