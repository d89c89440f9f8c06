#!/bin/sh
# Regenerate vmlinux/vmlinux.h from a kernel's BTF. The build never reads the running kernel's
# BTF: CO-RE relocations make the checked-in header good for other kernels, so this is only
# needed to use types or fields that are not in the checked-in copy.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
here=$(dirname "$0")
bpftool btf dump file "$btf" format c > "$here/vmlinux.h.tmp"
mv "$here/vmlinux.h.tmp" "$here/vmlinux.h"
