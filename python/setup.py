"""The wheel carries libtiled_attn_runtime.so (loaded through ctypes, so any
Python 3 can use it) and, when scripts/build_wheel.sh put it there, the
kernel library: it is tagged py3-none-<platform>, not pure."""

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"bdist_wheel": PlatformWheel})
