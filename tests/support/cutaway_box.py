"""Which points a cutaway's box holds: the Empty's cube (local [-1, 1]^3) turned, moved and
scaled as the scene records it, a frustum when the camera is in perspective; for the cutaway
tests of every view."""
import numpy as np


def inside_box(box, pts):
    """Points inside the Empty's cube (local [-1, 1]^3) of ``box``."""
    a, b, c = box["rotation"]
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    R = rz @ ry @ rx
    local = (np.asarray(pts) - np.asarray(box["location"])) @ R / np.asarray(box["scale"])
    dist = -local[:, 2]
    bound = dist if box["perspective"] else np.ones_like(dist)
    return (dist > 0) & (dist < 1) & (np.abs(local[:, 0]) < bound) & (np.abs(local[:, 1]) < bound)
