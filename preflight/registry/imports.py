"""``import.*``: child-process import probe results (producer: probes/imports.py)."""

from preflight.registry import FactSpec as F

SPECS = (
    F("import.<module>.ok", "bool", "The module imported cleanly in a child process"),
    F("import.<module>.error", "str", "The last line of the import error, when it failed"),
    F("import.<module>.error_kind", "str", "Failure class: abi_undefined_symbol | missing_library | version_mismatch | broken_install | missing_dependency | not_installed | timeout | crash | other"),
    F("import.<module>.seconds", "float", "Wall time of the import in the child process"),
    F("import.<module>.version", "str", "__version__ reported by the imported module"),
    F("import.torch.cuda_available", "bool", "torch.cuda.is_available() in the child process"),
    F("import.torch.cuda_version", "version", "torch.version.cuda in the child process"),
    F("import.torch.device_count", "int", "torch.cuda.device_count() in the child process"),
)
