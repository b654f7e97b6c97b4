"""Numba's typing of a kernel without compiling it: what a test needs to know of the
calls a kernel makes (the kernels it reaches, the argument types each gets, what each
returns), at the cost of type inference alone. A kernel loaded from numba's cache says
none of this, and compiling a fresh copy costs the whole lowering and LLVM (seconds for
the search's ``expand``)."""


def typed(dispatcher, argtypes):
    """Numba's typing of ``dispatcher`` for ``argtypes``: its compiler's pipeline up to
    type inference and no further (no lowering, no LLVM). The callees it types are
    compiled as they would be for the kernel (or loaded from the cache)."""
    from numba.core import compiler
    from numba.core.compiler_machinery import PassManager
    from numba.core.typed_passes import NopythonTypeInference

    class TypeOnly(compiler.CompilerBase):
        def define_pipelines(self):
            full = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm = PassManager("type only")
            for pass_, name in full.passes:
                pm.add_pass(pass_, name)
                if pass_ is NopythonTypeInference:
                    break
            pm.finalize()
            return [pm]

    flags = compiler.Flags()
    dispatcher.targetdescr.options.parse_as_flags(flags, dispatcher.targetoptions)
    typing = TypeOnly(dispatcher.targetdescr.typing_context,
                      dispatcher.targetdescr.target_context, None, tuple(argtypes), None,
                      flags, dispatcher.locals)
    try:
        typing.compile_extra(dispatcher.py_func)
    except (compiler.CompilerError, AttributeError):    # stopped before lowering, as asked
        pass
    return typing.state


def callees(state):
    """``(dispatcher, argument types)`` of each kernel a typed function calls: a jitted
    function (a global, a closure, an argument) or the implementation of an
    ``@overload`` (numba's own included)."""
    from numba.core import ir, types
    for inst, sig in state.calltypes.items():
        if not (isinstance(inst, ir.Expr) and inst.op == "call"):
            continue
        fnty = state.typemap[inst.func.name]
        if isinstance(fnty, types.Dispatcher):
            yield fnty.dispatcher, sig.args
            continue
        for template in getattr(fnty, "templates", None) or ():
            for built in getattr(template, "_impl_cache", {}).values():
                impl = built[0] if isinstance(built, tuple) else None
                for impl_sig in getattr(impl, "signatures", ()):
                    yield impl, impl_sig
