"""BMI2's ``pext`` and ``pdep`` for numba kernels, and whether to use them.

The cascade walk (:mod:`engine.movegen._core`) decodes millions of 40-bit boards a second:
with ``pext`` a board's occupied slots are one instruction, with ``pdep`` where a slot
begins is two, where a loop over the board's runs of 1s takes tens. The instructions
exist on x86-64 CPUs since Intel Haswell and AMD Excavator, but AMD's before Zen 3
run them in microcode, tens to hundreds of cycles each, slower than the loop. So
:data:`FAST_BMI2` is true only where the host CPU has them fast and numba compiles for
that host; callers choose their decode once, at import (numba freezes globals into the
kernels, and its cache is kept apart per CPU). ``NARDY_BMI2=0`` turns them off for
kernels compiled afresh (numba's cache does not see the variable: give such a process a
cache of its own, ``NUMBA_CACHE_DIR``, as the tests do).
"""

import os

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_SLOW = ("znver1", "znver2", "bdver1", "bdver2", "bdver3", "bdver4", "btver1", "btver2")
"""CPUs whose ``pext``/``pdep`` are microcoded (LLVM's names)."""


def _fast_bmi2() -> bool:
    if os.environ.get("NARDY_BMI2", "").strip() == "0":
        return False
    try:
        import llvmlite.binding as llvm
        from numba.core import config
        if config.CPU_NAME or config.CPU_FEATURES:   # compiling for some other CPU
            return False
        name = llvm.get_host_cpu_name()
        return bool(llvm.get_host_cpu_features().get("bmi2")) and name not in _SLOW
    except Exception:                                # no answer: the safe choice
        return False


FAST_BMI2 = _fast_bmi2()
"""Whether :func:`pext` and :func:`pdep` may be compiled into kernels here."""


def _bmi2(name):
    @intrinsic
    def op(typingctx, a, b):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(i64, [i64, i64]), name)
            return builder.call(fn, args)
        return types.int64(types.int64, types.int64), codegen
    return op


pext = _bmi2("llvm.x86.bmi.pext.64")
"""``pext(x, mask)``: the bits of ``x`` under ``mask``, packed to the low end (int64).
Only where :data:`FAST_BMI2`."""

pdep = _bmi2("llvm.x86.bmi.pdep.64")
"""``pdep(x, mask)``: the low bits of ``x`` spread to the places of ``mask``'s 1s
(int64). Only where :data:`FAST_BMI2`."""
