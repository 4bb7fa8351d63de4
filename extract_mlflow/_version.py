__version__ = "0.2.0"


def compiled_modules() -> tuple[str, ...]:
    """The modules of this package that are compiled with mypyc in this install: those whose
    compiled extension sits beside their source (Python then imports the extension). Empty
    for a source or editable install, which is pure Python; a compiled release wheel gives
    the same results, faster.

    >>> isinstance(compiled_modules(), tuple)
    True
    """
    from importlib.machinery import EXTENSION_SUFFIXES
    from pathlib import Path

    root = Path(__file__).parent
    found = []
    for path in sorted(root.rglob("*.*")):
        stem, _, suffix = path.name.partition(".")
        if f".{suffix}" in EXTENSION_SUFFIXES and path.with_name(f"{stem}.py").is_file():
            found.append(".".join(("extract_mlflow", *path.relative_to(root).parent.parts, stem)))
    return tuple(found)
