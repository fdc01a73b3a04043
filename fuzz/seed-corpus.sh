#!/usr/bin/env bash
# Copy seed inputs for each fuzz target from ../../shared/corpus (beside the
# checkout) into fuzz/corpus/TARGET/. Nothing is committed: run before fuzzing.
set -eu
cd "$(dirname "$0")"
SHARED=${SHARED:-${DRIFTAUDIT_CORPUS:-../../shared/corpus}}
# without the corpus the targets start from empty seeds (and the policy files)
[ -d "$SHARED" ] || echo "no corpus at $SHARED (set SHARED=DIR): fuzzing from empty seeds" >&2
seed() { mkdir -p "corpus/$1"; shift; for d in "$@"; do cp -f "$SHARED/$d"/* "corpus/$T/" 2>/dev/null || true; done; }
T=sysctl_conf;     seed $T sysctl
T=sysctl_capture;  seed $T sysctl
T=meminfo;         seed $T meminfo
T=mycnf;           seed $T mycnf
T=mysql_variables; seed $T mysql-variables
T=localconfig;     seed $T zimbra
T=octal;           seed $T fstab mounts
T=fstab;           seed $T fstab
T=mountinfo;       seed $T mounts
T=ext4;            seed $T ext4
T=policy_yaml;     mkdir -p corpus/$T; cp -f ../policies/*.yaml corpus/$T/
T=fix_plan;        mkdir -p corpus/$T
# fix: mode byte (bit 0: --prefer running), sysctl.d text, 0xff, a running value
printf '\001net.ipv4.tcp_tw_recycle = 1\r\nnet.core.somaxconn = 4096\n\377128\r\r\n' > corpus/$T/crlf
printf '\000net.ipv4.tcp_tw_recycle = 1\r\r\nnet.core.somaxconn = 4096\n' > corpus/$T/crcrlf
printf '\001net.core.somaxconn = 4096\n\377128\r9\033]0;x\007\n' > corpus/$T/control
T=expr;            mkdir -p corpus/$T
# expressions: every `assert:`/`applies:`-style line of the built-in policies
grep -hoE '(assert|expect|when|value|setting): .*' ../policies/*.yaml | sed 's/^[a-z]*: //' |
    awk '{ f = sprintf("corpus/expr/%04d", NR); print > f; close(f) }'
for d in corpus/*; do echo "$d: $(ls "$d" | wc -l) seeds"; done
