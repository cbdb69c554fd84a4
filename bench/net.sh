#!/usr/bin/env bash
# bench/net.sh [BUILD_DIR] - what the network policy costs per call, side by side with the
# native run (issue 8 item 8). A listener (bench/net_cost serve) runs natively on 127.0.0.1;
# each loop runs natively and under `stockade run --allow-net ...` alternately, rep by rep,
# and the table reports medians:
#   connect   socket + connect + close to the allowed port (the connect is emulated)
#   sendto    UDP sendto with a destination (emulated: judged, sent by the supervisor)
#   udp-first socket + sendto + close: a socket's first send (in a namespace: its twin made,
#             with the twin's socket filter)
#   send      UDP send on a connected socket (no destination: stays in the kernel)
#   getsockname  of a connected TCP socket (notified; where twins can exist, as with these
#                rules, performed by the supervisor: syscalls/net_twin.c)
#   getsockname-local         of a UDP socket bound in the sandbox, with the rules (performed)
#   getsockname-local:norule  the same without any rule (no twin can exist: continued)
#   udp-echo     send + recv of the echo on a connected UDP socket (in the kernel; with the
#                namespace the socket is a twin, and its socket filter judges each echo)
# Then bench/twin_filter: the twin's filter alone, natively, per datagram and per send.
# Knobs: REPS [11], CONNECT_ITERS [2000], UDP_ITERS [20000]. Uses loopback only.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=$(cd "${1:-./build}" && pwd)
REPS=${REPS:-11}
CONNECT_ITERS=${CONNECT_ITERS:-2000}
UDP_ITERS=${UDP_ITERS:-20000}
need_built bench stockade bench/net_cost bench/twin_filter
cost=$build/bench/net_cost
filter=$build/bench/twin_filter

work=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$work"' EXIT
# The listener stops when its stdin (fd 3 here) closes.
coproc SERVER { "$cost" serve; }
exec 3>&"${SERVER[1]}"
read -r port <&"${SERVER[0]}"
allow=(--allow-net "tcp/127.0.0.1:$port" --allow-net "udp/127.0.0.1:$port")

modes=(connect sendto udp-first send getsockname getsockname-local getsockname-local:norule udp-echo)
for mode in "${modes[@]}"; do
	iters=$UDP_ITERS
	[[ $mode == connect || $mode == udp-first ]] && iters=$CONNECT_ITERS
	rules=("${allow[@]}")
	[[ $mode == *:norule ]] && rules=()
	for ((i = 0; i < REPS; i++)); do
		"$cost" "${mode%:*}" "$port" "$iters" | sed 's/.*=//' >>"$work/$mode.native"
		"$stockade" run -q "${as_user[@]}" "${rules[@]}" -- "$cost" "${mode%:*}" "$port" \
			"$iters" | sed 's/.*=//' >>"$work/$mode.stockade"
	done
	echo "net.sh: $mode done" >&2
done

printf '| case | native | stockade | added per call | ratio |\n|---|---|---|---|---|\n'
for mode in "${modes[@]}"; do
	n=$(median <"$work/$mode.native")
	s=$(median <"$work/$mode.stockade")
	awk -v m="$mode" -v n="$n" -v s="$s" 'BEGIN {
		printf "| %s | %.2f us | %.2f us | %+.2f us | %.2fx |\n", m, n / 1000, s / 1000, (s - n) / 1000, s / n }'
done

echo
echo "The twin's socket filter alone, natively (bench/twin_filter $REPS $UDP_ITERS):"
echo
"$filter" "$REPS" "$UDP_ITERS" 2>/dev/null
