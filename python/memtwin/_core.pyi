"""Type stubs for the Rust extension module (crates/py). Use the `memtwin` package instead."""

from typing import Any, Callable, Dict, List, Optional, Tuple

__version__: str
DEFAULT_SCENARIO_NAME: str

DEFAULT_MAX_SIM_TIME: float
DEFAULT_MAX_WALL: float
DEFAULT_MAX_EVENTS: int
DEFAULT_MAX_OUTPUT: int

class MemtwinError(ValueError):
    """Bad input to memtwin: the message names file:line where there is one."""

class HostMemoryError(MemtwinError):
    """The simulated machine needs more host memory than the host has available."""

def run(
    script_text: Optional[str] = None,
    script_path: Optional[str] = None,
    machine: str = "",
    sets: List[str] = ...,
    seed: int = 0,
    max_sim_time: Optional[float] = None,
    max_wall: Optional[float] = None,
    max_events: Optional[int] = None,
    max_output: Optional[int] = None,
    on_output: Optional[Callable[[str], object]] = None,
) -> Dict[str, Any]: ...
def write_output(path: str, data: bytes) -> None: ...
def check_output(path: str) -> None: ...
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
