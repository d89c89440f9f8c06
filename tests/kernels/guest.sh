#!/bin/busybox sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The guest's /init (tests/kernels/matrix.sh): mount what cgstat needs, as a distribution's
# init would, on a pure cgroup v2 layout; run tests/kernels/guest_checks.py with the checks
# named on the kernel's command line (cgstat.checks=a,b,c; all by default); print its lines on
# the console; power off.
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin HOME=/tmp TERM=linux PYTHONDONTWRITEBYTECODE=1
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs shm /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# the controllers the checks' cgroups use: cpu for cpu.max and pressure, the rest as systemd
# enables them
for c in cpu cpuset io memory pids; do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
done
checks=$(sed -n 's/.*cgstat\.checks=\([^ ]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
echo "GUEST $(uname -r) cpus=$(nproc) checks=${checks:-all}" \
	"clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
dmesg | grep -iE 'sched_clock|clocksource.*unstable|tsc.*unstable' | sed 's/^/GUEST-CLOCK /' 
python3 /tests/kernels/guest_checks.py --cgstat /bin/cgstat --workload /bin/workload $checks
echo "GUEST-EXIT $?"
poweroff -f
