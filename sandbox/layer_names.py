"""The isolation layers, by the names used in reports and in SANDBOX_REQUIRE."""

KERNEL_LAYERS = ("namespaces", "privilege_drop", "rlimits", "landlock", "seccomp")
ALL_LAYERS = KERNEL_LAYERS + ("restricted_python",)
