"""Type stubs of the native module (``muranopl._native``)."""

from typing import Any, Iterable, Optional, Sequence, Tuple, List, Dict, Callable

VERSION: str
DEFAULT_LIMIT_ITERATORS: int
DEFAULT_MEMORY_QUOTA: int
DEFAULT_MAX_MEMORY: int
DEFAULT_TIMEOUT: float

class Engine:
    def __init__(
        self,
        legacy: bool = ...,
        limit_iterators: Optional[int] = ...,
        memory_quota: Optional[int] = ...,
        max_memory: Optional[int] = ...,
        timeout: Optional[float] = ...,
        convert_sets_to_lists: Optional[bool] = ...,
    ) -> None: ...
    def compile(self, expr: str) -> Expression: ...
    @property
    def legacy(self) -> bool: ...

class Expression:
    def evaluate(
        self,
        data: Any = ...,
        vars: Optional[Dict[str, Any]] = ...,
        funcs: Optional[List[Tuple[str, Callable[..., Any]]]] = ...,
    ) -> Any: ...
    def evaluate_many(
        self,
        items: Iterable[Any],
        vars: Optional[Dict[str, Any]] = ...,
        funcs: Optional[List[Tuple[str, Callable[..., Any]]]] = ...,
        return_exceptions: bool = ...,
    ) -> List[Any]: ...
    @property
    def source(self) -> str: ...

class Lambda:
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

_Violation = Tuple[str, str, str, Optional[str]]

class Catalog:
    @staticmethod
    def load(paths: Sequence[str], search_path: Sequence[str] = ...) -> Catalog: ...
    def packages(self) -> List[str]: ...
    def validate(self, model: Any) -> List[_Violation]: ...
    def validate_many(
        self, models: Iterable[Any], return_exceptions: bool = ...
    ) -> List[Any]: ...
    def schema(
        self,
        class_name: str,
        methods: Optional[List[str]] = ...,
        class_version: Optional[str] = ...,
        package: Optional[str] = ...,
    ) -> Dict[str, Any]: ...
    def run(self, model: Any, method: str = ..., cloud: Optional[str] = ...) -> Dict[str, Any]: ...

class TestSuite:
    def __init__(self, path: str, search_path: Sequence[str] = ...) -> None: ...
    def plan(self, selectors: Sequence[str] = ...) -> List[Tuple[str, str]]: ...
    def run(self, class_: str, test: str) -> Optional[str]: ...

def ui_model(
    package: str, search_path: Sequence[str] = ..., answers: Any = ...
) -> Tuple[Any, Any, List[str]]: ...
