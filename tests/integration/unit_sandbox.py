# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A command run under the seccomp filters a systemd unit's sandbox is made of, for a test to
run cgstat as its unit would without systemd as PID 1 (test_unit.py). Built with libseccomp
(libseccomp2, which apt itself needs) as Debian 12's systemd 252 builds them:

- SystemCallFilter= (an allow-list): every other system call kills the process (SIGSYS). The
  unit may answer EPERM instead (SystemCallErrorNumber=); killing is stricter, so that no call
  outside the list goes unseen behind an error a caller handles;
- SystemCallArchitectures=native: libseccomp's filter is for the native ABI alone;
- RestrictAddressFamilies= (an allow-list): socket() of another family fails, EAFNOSUPPORT;
- MemoryDenyWriteExecute=yes: mmap() writable and executable, mprotect() and pkey_mprotect()
  to executable, shmat() with SHM_EXEC fail, EPERM.

    python3 unit_sandbox.py SPEC.json -- COMMAND [ARG]...

SPEC: {"syscalls": [names], "families": [AF_* names], "mdwe": true or false}; no_new_privs is
left to COMMAND (setpriv --no-new-privs, as the unit's NoNewPrivileges= says)."""

import ctypes
import errno
import json
import os
import socket
import sys

ACT_KILL_PROCESS = 0x80000000
ACT_ALLOW = 0x7FFF0000
FLTATR_CTL_NNP = 3
CMP_LT, CMP_EQ, CMP_GT, CMP_MASKED_EQ = 2, 4, 6, 7
PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000


def act_errno(err):
    return 0x00050000 | (err & 0xFFFF)


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                       ctypes.c_uint, ctypes.POINTER(ArgCmp)]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
lib.seccomp_release.argtypes = [ctypes.c_void_p]


def nr(name):
    """The native number of a system call; None for one this architecture has not (systemd's
    groups name some of other architectures, as arm_fadvise64_64)."""
    n = lib.seccomp_syscall_resolve_name(name.encode())
    return n if n >= 0 else None


def rule(ctx, action, name, *cmps):
    n = nr(name)
    if n is None:
        return
    arr = (ArgCmp * max(len(cmps), 1))(*[ArgCmp(*c) for c in cmps])
    err = lib.seccomp_rule_add_array(ctx, action, n, len(cmps), arr)
    if err:
        raise OSError(-err, "seccomp_rule_add(%s)" % name)


def load(default, add):
    """A filter of its own, stacked on those before it: the kernel takes the strictest
    answer of all, as it does with the several systemd loads."""
    ctx = lib.seccomp_init(default)
    if not ctx:
        raise OSError(errno.ENOMEM, "seccomp_init")
    lib.seccomp_attr_set(ctx, FLTATR_CTL_NNP, 0)
    add(ctx)
    err = lib.seccomp_load(ctx)
    lib.seccomp_release(ctx)
    if err:
        raise OSError(-err, "seccomp_load")


def syscalls(ctx, names):
    for name in names:
        rule(ctx, ACT_ALLOW, name)


def families(ctx, names):
    allowed = sorted(getattr(socket, name) for name in names)
    refuse = act_errno(errno.EAFNOSUPPORT)
    rule(ctx, refuse, "socket", (0, CMP_LT, allowed[0], 0))
    rule(ctx, refuse, "socket", (0, CMP_GT, allowed[-1], 0))
    for family in range(allowed[0] + 1, allowed[-1]):
        if family not in allowed:
            rule(ctx, refuse, "socket", (0, CMP_EQ, family, 0))


def mdwe(ctx):
    refuse = act_errno(errno.EPERM)
    rule(ctx, refuse, "mmap", (2, CMP_MASKED_EQ, PROT_EXEC | PROT_WRITE, PROT_EXEC | PROT_WRITE))
    rule(ctx, refuse, "mprotect", (2, CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
    rule(ctx, refuse, "pkey_mprotect", (2, CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
    rule(ctx, refuse, "shmat", (2, CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: unit_sandbox.py SPEC.json -- COMMAND [ARG]...")
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    command = sys.argv[3:]
    if spec.get("families"):
        load(ACT_ALLOW, lambda ctx: families(ctx, spec["families"]))
    if spec.get("mdwe"):
        load(ACT_ALLOW, mdwe)
    # last: the two above need no call outside it, and neither does the exec
    if spec.get("syscalls") is not None:
        load(ACT_KILL_PROCESS, lambda ctx: syscalls(ctx, spec["syscalls"]))
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
