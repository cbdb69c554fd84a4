#!/usr/bin/env bash
# scripts/apparmor-userns.sh [--print] [STOCKADE]
#
# Ubuntu 23.10 and later (24.04 LTS included) let a program make an unprivileged user
# namespace only if an AppArmor profile grants it `userns` (sysctl
# kernel.apparmor_restrict_unprivileged_userns=1). Without one, stockade runs without its
# namespaces: no copy-on-write workspace (the current directory is writable), no private
# /tmp, no network namespace, no --fast (README, "Hosts without user namespaces").
#
# This writes /etc/apparmor.d/stockade, a profile for the stockade binary STOCKADE (default:
# the `stockade` on PATH, else build/stockade) that grants it `userns` and nothing else changes
# (flags=(unconfined): no other mediation), the way Ubuntu grants it to bwrap or Chrome, and
# loads it. Run it once, as root, after each install to a new path. The sandboxed program
# itself still cannot make a namespace: stockade's seccomp filter refuses unshare and
# clone's namespace flags.
#
# --print only prints the profile (nothing is written or loaded; no root needed).
set -euo pipefail

me=${0##*/}
print=false
if [[ ${1:-} == --print ]]; then
	print=true
	shift
fi
if [[ $# -gt 1 || ${1:-} == -* ]]; then
	echo "usage: $me [--print] [STOCKADE]" >&2
	exit 2
fi

bin=${1:-}
if [[ -z $bin ]]; then
	bin=$(command -v stockade 2>/dev/null || true)
	[[ -n $bin ]] || bin=$(dirname "$0")/../build/stockade
fi
if [[ ! -x $bin ]]; then
	echo "$me: \`$bin\` is not an executable stockade (give its path)" >&2
	exit 2
fi
bin=$(realpath -- "$bin")
# AppArmor matches the exec'd path: a path with spaces or globbing characters would need
# quoting and escaping that this script does not attempt.
if [[ $bin =~ [[:space:]\"\*\?\[\{\}\^\#] ]]; then
	echo "$me: \`$bin\`: the path has a character an AppArmor profile would need escaped;" \
		"install stockade under a plain path" >&2
	exit 2
fi

profile="# Written by stockade's scripts/apparmor-userns.sh: user namespaces for stockade
# (Ubuntu 23.10+ restricts them to programs whose profile grants userns).
abi <abi/4.0>,
include <tunables/global>

profile stockade $bin flags=(unconfined) {
  userns,

  include if exists <local/stockade>
}"

if $print; then
	printf '%s\n' "$profile"
	exit 0
fi

sysctl=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [[ ! -d /sys/kernel/security/apparmor ]]; then
	echo "$me: AppArmor is not active on this kernel: nothing restricts user namespaces here," \
		"no profile is needed" >&2
	exit 1
fi
if [[ ! -r $sysctl || $(cat "$sysctl") != 1 ]]; then
	echo "$me: AppArmor does not restrict unprivileged user namespaces here ($sysctl is not 1):" \
		"no profile is needed" >&2
	exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "$me: writing /etc/apparmor.d/stockade needs root: sudo $0 $bin" >&2
	exit 1
fi
if ! command -v apparmor_parser >/dev/null; then
	echo "$me: apparmor_parser is missing (apt-get install apparmor)" >&2
	exit 1
fi
printf '%s\n' "$profile" >/etc/apparmor.d/stockade.new
if ! apparmor_parser -r /etc/apparmor.d/stockade.new; then
	rm -f /etc/apparmor.d/stockade.new
	echo "$me: apparmor_parser refused the profile (AppArmor older than 4.0?)" >&2
	exit 1
fi
mv /etc/apparmor.d/stockade.new /etc/apparmor.d/stockade
echo "$me: /etc/apparmor.d/stockade loaded: $bin may make user namespaces;" \
	"\`$bin run -v -- true\` should now say \"user namespaces yes\""
