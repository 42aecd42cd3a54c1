"""A worker's script loaded from a blob URL is named ``blob`` in labels: Firefox's profile of a
worker (tests/data/formats/firefox/gecko-worker.json.gz) labelled its functions
``fib (c186e5f1-3f7c-477a-9ab0-e5463bf37c9a:2)``, the URL's random UUID taking 36 characters
of every name in the thread view and the icicle."""
import pytest

from tracevis3d.names import parse_function_name
from tracevis3d.naming import describe_function, location_label

BLOB = "blob:null/c186e5f1-3f7c-477a-9ab0-e5463bf37c9a"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name,file,line", [(f"fib ({BLOB}:2)", "", -1), ("fib", BLOB, 2),
                                            ("work", "blob:https://example.org/5f0c9d3e-1b2a-4c3d-9e8f-0a1b2c3d4e5f", 4)])
def test_a_blob_script_is_blob_in_labels(name, file, line):
    display = describe_function(name, parse_function_name(name, file, line))[3]
    assert display in ("fib (blob:2)", "work (blob:4)"), display


@pytest.mark.timeout(30)
def test_other_locations_keep_their_base_name():
    assert location_label("https://host/static/js/app.js?v=2", 12) == "app.js:12"
    assert location_label(BLOB) == "blob"
    assert location_label("/src/blob.py", 3) == "blob.py:3"
