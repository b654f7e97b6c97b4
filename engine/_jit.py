"""Numba flags of the network and training kernels, in one place.

``fastmath`` lets LLVM reassociate the float32 dot products and vectorise them;
``error_model="numpy"`` drops the zero-division check Python semantics would put in
every ``/``, which otherwise blocks vectorising the sigmoid.
"""

FAST = dict(cache=True, fastmath=True, error_model="numpy")
"""Flags of the hot float32 kernels."""
