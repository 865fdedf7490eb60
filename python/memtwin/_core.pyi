"""Type stubs for the Rust extension module (crates/py). Use the `memtwin` package instead."""

from typing import Dict, List, Optional, Tuple, Union

__version__: str
DEFAULT_SCENARIO_NAME: str

class MemtwinError(ValueError):
    """Bad input to memtwin: the message names file:line where there is one."""

def run(
    script_text: Optional[str] = None,
    script_path: Optional[str] = None,
    machine: str = "",
    sets: List[str] = ...,
    seed: int = 0,
) -> Dict[str, Union[str, int, float, List[float], List[Tuple[str, List[int]]]]]: ...
def presets() -> List[Tuple[str, str]]: ...
def default_scenario() -> Tuple[str, str]: ...
def machine_directive(text: str) -> Optional[str]: ...
def replay(
    path: str,
    policy: str = "lru",
    format: Optional[str] = None,
    cache_size: Optional[str] = None,
    machine: Optional[str] = None,
    sets: List[str] = ...,
    readahead: Optional[bool] = None,
    seed: int = 0,
) -> Dict[str, object]: ...
