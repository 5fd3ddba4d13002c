from dsl import *
from constants import *


# mirror the grid left to right
def solve_demo_mirror(I):
    O = vmirror(I)
    return O


# the largest object turns red
def solve_demo_recolor_largest(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    O = fill(I, TWO, x2)
    return O


# remove every isolated single cell
def solve_demo_remove_noise(I):
    x1 = objects(I, T, T, T)
    x2 = sizefilter(x1, ONE)
    x3 = merge(x2)
    O = cover(I, x3)
    return O


# draw a green frame around every object
def solve_demo_frame_objects(I):
    x1 = objects(I, T, T, T)
    x2 = mapply(outbox, x1)
    O = fill(I, THREE, x2)
    return O


# swap the two colors of the grid
def solve_demo_swap_colors(I):
    x1 = palette(I)
    x2 = remove(ZERO, x1)
    x3 = first(x2)
    x4 = other(x2, x3)
    O = switch(I, x3, x4)
    return O


# cut out the single object
def solve_demo_crop_object(I):
    x1 = objects(I, F, T, T)
    x2 = first(x1)
    O = subgrid(x2, I)
    return O
