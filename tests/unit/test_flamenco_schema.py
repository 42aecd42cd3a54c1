"""tools/flamenco/submit.py's job body against Flamenco's published description of job
submission: ``SubmittedJob`` of Flamenco's OpenAPI file (``pkg/api/flamenco-openapi.yaml``),
written as tools/flamenco/submitted_job.schema.json with the settings each job type declares.
Checked by a small checker of fields, types, ranges and required names (and by jsonschema
too where it is installed).  No server."""
import importlib.util
import json
import pathlib
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tools" / "flamenco" / "submitted_job.schema.json").read_text(encoding="utf-8"))
TYPES = {"string": str, "integer": int, "object": dict}
SETTING_TYPES = {"string": (str,), "int32": (int,), "float": (int, float), "bool": (bool,)}


def _submit():
    spec = importlib.util.spec_from_file_location("flamenco_submit", ROOT / "tools" / "flamenco" / "submit.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def problems(body) -> list:
    """What in ``body`` the SubmittedJob schema and its job type's settings refuse."""
    out = []
    if not isinstance(body, dict):
        return ["not an object"]
    props = SCHEMA["properties"]
    out += [f"missing {k}" for k in SCHEMA["required"] if k not in body]
    out += [f"unknown field {k}" for k in body if k not in props]
    for k, v in body.items():
        p = props.get(k)
        if p is None:
            continue
        t = TYPES[p["type"]]
        if not isinstance(v, t) or (t is int and isinstance(v, bool)):
            out.append(f"{k}: not {p['type']}")
            continue
        if "minimum" in p and not p["minimum"] <= v <= p["maximum"]:
            out.append(f"{k}: {v} outside {p['minimum']}-{p['maximum']}")
        if p.get("format") == "uuid":
            try:
                uuid.UUID(v)
            except ValueError:
                out.append(f"{k}: not a uuid")
        if k == "metadata":
            out += [f"metadata {mk}: not a string" for mk, mv in v.items() if not isinstance(mv, str)]
    declared = SCHEMA["x-job-settings"].get(body.get("type"))
    settings = body.get("settings", {})
    if declared is None:
        out.append(f"unknown job type {body.get('type')!r}")
    elif isinstance(settings, dict):
        out += [f"setting {k} missing" for k, (_, req, *_r) in declared.items() if req and k not in settings]
        for k, v in settings.items():
            if k not in declared:
                out.append(f"setting {k} is not a setting of {body['type']}")
                continue
            kind, _, *bounds = declared[k]
            if not isinstance(v, SETTING_TYPES[kind]) or (kind != "bool" and isinstance(v, bool)):
                out.append(f"setting {k}: not {kind}")
            elif bounds and not bounds[0] <= v <= bounds[1]:
                out.append(f"setting {k}: {v} outside {bounds[0]}-{bounds[1]}")
    return out


ARGS = ["--blend", "/shared/anim/growth.blend", "--frames", "1-300", "--fps", "30", "--output-root", "/shared/render"]


@pytest.mark.parametrize("extra", [[], ["--type", "simple-blender-render"], ["--chunk-size", "7", "--priority", "100",
                                                                            "--no-video", "--name", "Ш 3D"]])
@pytest.mark.parametrize("etag", [None, "0a1b2c"])
def test_submit_body_is_a_valid_submitted_job(extra, etag):
    mod = _submit()
    body = json.loads(mod.strict_json(mod.job_body(mod.parse(ARGS + extra), etag)))
    assert problems(body) == []
    assert ("type_etag" in body) == bool(etag)
    try:
        import jsonschema
    except ImportError:
        return
    jsonschema.validate(body, {k: v for k, v in SCHEMA.items() if not k.startswith("x-")})


@pytest.mark.parametrize("change, says", [
    (lambda b: b.pop("submitter_platform"), "missing submitter_platform"),
    (lambda b: b.update(priority=101), "priority: 101 outside"),
    (lambda b: b.update(priority="50"), "priority: not integer"),
    (lambda b: b.update(prority=5), "unknown field prority"),
    (lambda b: b["metadata"].update(n=1), "metadata n: not a string"),
    (lambda b: b["settings"].pop("render_output_root"), "setting render_output_root missing"),
    (lambda b: b["settings"].update(chunk_size=2.5), "setting chunk_size: not int32"),
    (lambda b: b["settings"].update(images_or_video="images"), "not a setting"),
    (lambda b: b.update(worker_tag="gpu"), "worker_tag: not a uuid"),
])
def test_the_checker_refuses_what_the_schema_refuses(change, says):
    mod = _submit()
    body = json.loads(mod.strict_json(mod.job_body(mod.parse(ARGS), "e")))
    change(body)
    assert any(says in p for p in problems(body)), problems(body)


def test_schema_names_its_source():
    text = SCHEMA["$comment"]
    assert "pkg/api/flamenco-openapi.yaml" in text and "GPL-3.0" in text
    assert set(SCHEMA["required"]) == {"name", "type", "priority", "submitter_platform"}
