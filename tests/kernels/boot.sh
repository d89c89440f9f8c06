#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Boot one kernel with an initramfs under QEMU (TCG: no KVM here) and copy its serial console
# to stdout; the guest powers itself off. Exit 124 when it did not within the time limit.
#
#   tests/kernels/boot.sh VMLINUZ INITRD [SECONDS] [APPEND...]
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: tests/kernels/boot.sh VMLINUZ INITRD [SECONDS] [APPEND...]" >&2; exit 2; }
kernel=$1 initrd=$2 limit=${3:-600}
shift $(($# < 3 ? $# : 3))
# thread=single: the guest's 2 CPUs take turns on one host thread. With a thread each (MTTCG),
# 2 of about 10 guests died in __schedule on "Oops: int3" as cgstat attached or detached: a CPU
# ran its stale translation of the tracepoint's jump site after the kernel had patched it and
# removed the breakpoint (QEMU 7.2's cross-CPU code modification). Taking turns costs nothing
# in time here (the checks run for a fixed time) and leaves a host CPU to QEMU's own threads.
# tsc=reliable: TCG's TSC follows the host's clock, the same on every guest CPU; the flag keeps
# the clocksource watchdog, which a guest CPU waiting for its turn can fool, from swapping it for
# a coarser clock under the checks.
exec timeout --foreground -k 5 "$limit" qemu-system-x86_64 -accel tcg,thread=single -cpu max \
	-smp 2 -m 1024 -display none -monitor none -serial stdio -no-reboot -nodefaults \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 rdinit=/init quiet panic=-1 tsc=reliable $*" </dev/null
