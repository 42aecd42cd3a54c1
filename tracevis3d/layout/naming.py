"""What a function is called in a figure: `tracevis3d.naming` (the base layer, where the
analyses use it too); this name stays for the layouts and existing imports."""
from ..naming import (INFRA_FUNCTIONS, INFRA_MODULES, JS_INFRA_MODULES, FunctionTable, describe_function,  # noqa: F401
                      drop_locals, function_table, share_function_table)
