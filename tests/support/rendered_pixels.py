"""A rendered image's pixels as a numpy array (rows from the top, RGBA floats), read through
Blender's image loader; for the tests that look at rendered figures (needs bpy)."""
import numpy as np


def image_pixels(path):
    import bpy

    img = bpy.data.images.load(str(path), check_existing=False)
    try:
        w, h = img.size
        a = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(a)
        return a.reshape(h, w, 4)[::-1]  # row 0 at the top
    finally:
        bpy.data.images.remove(img)
