"""The live scene's growable point-cloud chunks (`blender.live_view`): `CHUNK` boxes per
object, made once by the icicle writer (zero-size boxes = room) and rewritten with one
``foreach_set`` per attribute, or element-wise where at most `FEW` boxes changed."""
from __future__ import annotations

import bpy
import numpy as np

from .writer import write_layer

CHUNK = 1 << 15
FEW = 64  # up to this many changed boxes in a chunk are written element-wise


class Chunk:
    def __init__(self, ob):
        self.ob = ob
        self.pos = np.zeros((CHUNK, 3), np.float32)
        self.scale = np.zeros((CHUNK, 3), np.float32)
        self.col = np.ones((CHUNK, 4), np.float32)
        self.mat = np.zeros(CHUNK, np.int32)
        self.dirty = False
        self.touched: list = []  # slots changed since the last write (element-wise when few)

    def write(self) -> None:
        """Copy the changed boxes into Blender: a few → element by element (O(few)); many →
        one foreach_set per attribute (O(CHUNK) memcpy)."""
        A = self.ob.data.attributes
        slots = np.unique(np.concatenate(self.touched)) if self.touched else np.zeros(0, np.int64)
        if slots.size > FEW:
            A["position"].data.foreach_set("vector", self.pos.ravel())
            A["tv_scale"].data.foreach_set("vector", self.scale.ravel())
            A["tv_color"].data.foreach_set("color", self.col.ravel())
            A["tv_mat"].data.foreach_set("value", self.mat)
        else:
            P, S, C, M = (A[k].data for k in ("position", "tv_scale", "tv_color", "tv_mat"))
            for i in slots.tolist():
                P[i].vector = self.pos[i]
                S[i].vector = self.scale[i]
                C[i].color = self.col[i]
                M[i].value = int(self.mat[i])
        self.ob.data.update_tag()
        self.dirty = False
        self.touched = []


class ChunkedLayer:
    """Instances in point-cloud chunks of `CHUNK` points: the first made by the icicle
    writer (its instancer node group, materials ``materials``), the others as copies of an
    empty template (a data-block copy: milliseconds, no operator)."""

    def __init__(self, layout, coll, name: str, materials: list):
        self.layout, self.coll, self.name, self.materials = layout, coll, name, materials
        self.chunks: list[Chunk] = []
        self.template = None

    def chunk(self, k: int) -> Chunk:
        while len(self.chunks) <= k:
            name = f"TV3D_{self.name}_{len(self.chunks)}"
            if not self.chunks:
                lay = self.layout.empty_layer(self.name, CHUNK)
                lay.materials = list(self.materials)
                ob = write_layer(lay, self.coll, name)
                self.template = ob.data.copy()
                self.template.name = f"TV3D_{self.name}_template"
                self.template.use_fake_user = False
            else:
                first = self.chunks[0].ob
                ob = bpy.data.objects.new(name, self.template.copy())
                ob.data.name = name
                self.coll.objects.link(ob)
                mod = ob.modifiers.new(first.modifiers[0].name, "NODES")
                mod.node_group = first.modifiers[0].node_group
                for key in first.keys():
                    ob[key] = first[key]
            self.chunks.append(Chunk(ob))
        return self.chunks[k]

    def each_chunk(self, inst: np.ndarray):
        """(chunk, its slots, mask into ``inst``) of every chunk the instances ``inst`` are in,
        each marked to be written."""
        ck = inst // CHUNK
        for k in np.unique(ck):
            m = ck == k
            c = self.chunk(int(k))
            at = inst[m] % CHUNK
            c.dirty = True
            c.touched.append(at)
            yield c, at, m

    def put(self, inst: np.ndarray, pos, sc, col, mat) -> None:
        """Write boxes into the chunk arrays."""
        for c, at, m in self.each_chunk(inst):
            c.pos[at], c.scale[at], c.col[at], c.mat[at] = pos[m], sc[m], col[m], mat[m]

    def restyle(self, inst: np.ndarray, rgb, mat, z=None) -> None:
        """New colours and materials (and heights ``z``) of instances; sizes stay."""
        for c, at, m in self.each_chunk(inst):
            c.col[at, :3] = rgb[m]
            c.mat[at] = mat[m]
            if z is not None:
                c.pos[at, 2] = z[m]

    def write(self) -> None:
        for c in self.chunks:
            if c.dirty:
                c.write()

    def move(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Instances ``src`` copied to ``dst`` (read whole before any is written)."""
        rows = [np.zeros((src.shape[0], 3), np.float32), np.zeros((src.shape[0], 3), np.float32),
                np.zeros((src.shape[0], 4), np.float32), np.zeros(src.shape[0], np.int32)]
        ck = src // CHUNK
        for k in np.unique(ck).tolist():
            m = ck == k
            c, at = self.chunk(k), src[m] % CHUNK
            rows[0][m], rows[1][m], rows[2][m], rows[3][m] = c.pos[at], c.scale[at], c.col[at], c.mat[at]
        self.put(dst, *rows)

    def remove_template(self) -> None:
        if self.template is not None and self.template.users == 0:
            bpy.data.batch_remove([self.template])
            self.template = None
