"""Lambda's Python runtime in one place: the functions, the layer build, the embedding image and
the artifact tests all read it, so they cannot drift apart.

Python 3.12 runs on Amazon Linux 2023, whose C library is glibc 2.34: a wheel tagged
`manylinux_2_X` installs there when X ≤ 34. The embedding image is Lambda's Python image too: it
writes the model's ONNX graphs at build time with onnx, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

PYTHON_VERSION = "3.12"
ARCH = "x86_64"  # the functions' architecture (infra.runtime.ARCHITECTURE)


@dataclass(frozen=True)
class Base:
    """A base image and what a wheel must fit to run in it."""

    image: str
    python_version: str
    glibc: tuple[int, int]

    @property
    def platform_tags(self) -> list[str]:
        """Every manylinux tag a wheel may carry and still run here, newest first.

        pip's `--platform manylinux_2_34_x86_64` accepts exactly that tag and no older one, so the
        whole list is passed (as `packaging` derives it for a running interpreter)."""
        major, minor = self.glibc
        tags = [f"manylinux_{major}_{m}_{ARCH}" for m in range(minor, 4, -1)]
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
        tags += [f"{name}_{ARCH}" for m, name in legacy.items() if m <= minor]
        return tags

    @property
    def platform_tag(self) -> str:
        """The newest tag: what the base image itself is."""
        return self.platform_tags[0]


# The functions, the layer and the embedding function's image (Amazon Linux 2023).
LAMBDA = Base(f"public.ecr.aws/lambda/python:{PYTHON_VERSION}", PYTHON_VERSION, (2, 34))
