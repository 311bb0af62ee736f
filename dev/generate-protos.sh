#!/usr/bin/env bash
# Regenerates Sources/FleetProto (Fleet Engine) and Sources/OSMProto (OpenStreetMap PBF) from
# Protos/ with protoc (Debian's protobuf-compiler) and the
# swift-protobuf and grpc-swift-protobuf plugins built from the pinned packages.
# Run by hand after editing Protos/; the output is committed so builds never run protoc.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
# The well-known types (timestamp, duration, …) ship with libprotobuf-dev / protobuf-compiler.
WKT_INCLUDE="${WKT_INCLUDE:-/usr/include}"

[ -n "$(ls Sources/FleetProto/*.swift 2>/dev/null)" ] || echo '// bootstrap' > Sources/FleetProto/Bootstrap.pb.swift
swift build -c release --product protoc-gen-swift
swift build -c release --product protoc-gen-grpc-swift-2
BIN="$(swift build -c release --show-bin-path)"

OUT=Sources/FleetProto
# Old output is removed only now: the plugin build above needs the target to have sources.
find "$OUT" Sources/OSMProto -name '*.pb.swift' -delete
PROTOS=$(cd Protos && find . -name '*.proto' -not -path './osmpbf/*' | sed 's|^\./||' | sort)

(cd Protos && protoc -I . -I "$WKT_INCLUDE" \
  --plugin=protoc-gen-swift="$BIN/protoc-gen-swift" \
  --swift_out="../$OUT" --swift_opt=Visibility=Public --swift_opt=FileNaming=PathToUnderscores \
  $PROTOS)

SERVICES=$(cd Protos && find . -name '*_api.proto' | sed 's|^\./||' | sort)
(cd Protos && protoc -I . -I "$WKT_INCLUDE" \
  --plugin=protoc-gen-grpc-swift="$BIN/protoc-gen-grpc-swift-2" \
  --grpc-swift_out="../$OUT" --grpc-swift_opt=Visibility=Public,Server=true,Client=true,FileNaming=PathToUnderscores \
  $SERVICES)

OSM_PROTOS=$(cd Protos && find osmpbf -name '*.proto' | sort)
(cd Protos && protoc -I . \
  --plugin=protoc-gen-swift="$BIN/protoc-gen-swift" \
  --swift_out=../Sources/OSMProto --swift_opt=Visibility=Public --swift_opt=FileNaming=PathToUnderscores \
  $OSM_PROTOS)

echo "generated: $(ls "$OUT"/*.pb.swift | wc -l) files in $OUT, $(ls Sources/OSMProto/*.pb.swift | wc -l) in Sources/OSMProto"
