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
        legacy_syntax: Optional[bool] = ...,
        convert_tuples_to_lists: Optional[bool] = ...,
        operators: Optional[
            List[Optional[Tuple[str, str, Optional[str]]]]] = ...
    ) -> None: ...
    def compile(self, expr: str) -> Expression: ...
    def extend(
        self, functions: List[Tuple[str, bool]], objects: bool = ...
    ) -> Engine: ...
    def has_function(self, name: str) -> bool: ...
    @property
    def legacy(self) -> bool: ...

class Expression:
    def evaluate(
        self,
        data: Any = ...,
        vars: Optional[Dict[str, Any]] = ...,
        funcs: Optional[List[Tuple[str, Callable[..., Any]]]] = ...,
        dispatch: Any = ...,
    ) -> Any: ...
    def evaluate_many(
        self,
        items: Iterable[Any],
        vars: Optional[Dict[str, Any]] = ...,
        funcs: Optional[List[Tuple[str, Callable[..., Any]]]] = ...,
        return_exceptions: bool = ...,
        dispatch: Any = ...,
    ) -> List[Any]: ...
    @property
    def source(self) -> str: ...

class Lambda:
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class Caller:
    def data(self) -> Any: ...
    def var(self, name: str) -> Tuple[bool, Any]: ...
    def call(
        self,
        name: str,
        method: bool,
        args: Iterable[Any],
        kwargs: Optional[Dict[str, Any]] = ...,
        library: bool = ...,
    ) -> Any: ...
    def library_has(
        self, name: str, method: bool, args: List[Any], known: List[bool]
    ) -> bool: ...
    def library_laziness(
        self, name: str, method: bool, npos: int, named: List[str]
    ) -> List[Tuple[List[int], List[str], bool]]: ...
    def eval(
        self, source: str, data: Any = ..., vars: Optional[Dict[str, Any]] = ...
    ) -> Any: ...

class Arg:
    def value(self) -> Any: ...
    def is_mapping(self) -> bool: ...
    def constant(self) -> Tuple[bool, Any]: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

_Violation = Tuple[str, str, str, Optional[str]]

class Catalog:
    @staticmethod
    def load(paths: Sequence[str], search_path: Sequence[str] = ...) -> Catalog: ...
    def packages(self) -> List[str]: ...
    def validate(self, model: Any) -> List[_Violation]: ...
    def validate_many(
        self,
        models: Iterable[Any],
        return_exceptions: bool = ...,
        violation: Optional[Callable[[str, str, str, Optional[str]], Any]] = ...,
    ) -> List[Any]: ...
    def validate_objects(
        self, class_name: str, objects: Iterable[Any]
    ) -> List[List[Tuple[str, str]]]: ...
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
