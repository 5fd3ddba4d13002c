from dsl import *
from constants import *


# swap the color pairs 3-4, 1-5, 2-6 and 8-9
def solve_0d3d703e(I):
    x1 = switch(I, THREE, FOUR)
    x2 = switch(x1, ONE, FIVE)
    x3 = switch(x2, TWO, SIX)
    O = switch(x3, EIGHT, NINE)
    return O


# rows made of a single color become gray, all others black
def solve_25d8a9c8(I):
    x1 = objects(I, T, F, F)
    x2 = width(I)
    x3 = matcher(width, x2)
    x4 = sfilter(x1, hline)
    x5 = mfilter(x4, x3)
    x6 = shape(I)
    x7 = canvas(ZERO, x6)
    O = fill(x7, FIVE, x5)
    return O


# move everything down by one row
def solve_25ff71a9(I):
    x1 = asobject(I)
    x2 = shift(x1, DOWN)
    x3 = shape(I)
    x4 = canvas(ZERO, x3)
    O = paint(x4, x2)
    return O


# rotate the grid by 180 degrees
def solve_3c9b0459(I):
    O = rot180(I)
    return O


# a 1x1 blue cell if the grid is left-right symmetric, orange otherwise
def solve_44f52bb0(I):
    x1 = vmirror(I)
    x2 = equality(x1, I)
    x3 = branch(x2, ONE, SEVEN)
    O = canvas(x3, UNITY)
    return O


# fill the whole grid with its most common color
def solve_5582e5ca(I):
    x1 = mostcolor(I)
    x2 = shape(I)
    O = canvas(x1, x2)
    return O


# rotate the grid by 180 degrees
def solve_6150a2bd(I):
    O = rot180(I)
    return O


# one color: top row; two colors: main diagonal; three colors: anti-diagonal
def solve_6e02f1e3(I):
    x1 = numcolors(I)
    x2 = equality(x1, THREE)
    x3 = equality(x1, TWO)
    x4 = branch(x2, TWO_BY_ZERO, ORIGIN)
    x5 = branch(x3, TWO_BY_TWO, ZERO_BY_TWO)
    x6 = connect(x4, x5)
    x7 = canvas(ZERO, THREE_BY_THREE)
    O = fill(x7, FIVE, x6)
    return O


# transpose the grid along its main diagonal
def solve_74dd1130(I):
    O = dmirror(I)
    return O


# count the blue cells and draw that many red cells in a fixed order
def solve_794b24be(I):
    x1 = colorcount(I, ONE)
    x2 = decrement(x1)
    x3 = tojvec(x2)
    x4 = connect(ORIGIN, x3)
    x5 = canvas(ZERO, THREE_BY_THREE)
    x6 = fill(x5, TWO, x4)
    x7 = equality(x1, FOUR)
    x8 = branch(x7, TWO, ZERO)
    x9 = initset(UNITY)
    O = fill(x6, x8, x9)
    return O


# keep the most common color, paint every other cell gray
def solve_9565186b(I):
    x1 = mostcolor(I)
    x2 = ofcolor(I, x1)
    x3 = asindices(I)
    x4 = difference(x3, x2)
    O = fill(I, FIVE, x4)
    return O


# the column of the gray cell in each row decides the row's color
def solve_a85d4709(I):
    x1 = height(I)
    x2 = astuple(x1, ONE)
    x3 = canvas(TWO, x2)
    x4 = canvas(FOUR, x2)
    x5 = canvas(THREE, x2)
    x6 = hconcat(x3, x4)
    x7 = hconcat(x6, x5)
    x8 = ofcolor(I, FIVE)
    x9 = toobject(x8, x7)
    x10 = compose(hfrontier, last)
    x11 = fork(recolor, first, x10)
    x12 = mapply(x11, x9)
    O = paint(I, x12)
    return O


# every colored cell drips down to the bottom edge
def solve_d037b0a7(I):
    x1 = objects(I, T, F, T)
    x2 = merge(x1)
    x3 = rbind(shoot, DOWN)
    x4 = compose(x3, last)
    x5 = fork(recolor, first, x4)
    x6 = mapply(x5, x2)
    O = paint(I, x6)
    return O


# a single row with one cell per colored cell of the input
def solve_d631b094(I):
    x1 = palette(I)
    x2 = other(x1, ZERO)
    x3 = colorcount(I, x2)
    x4 = astuple(ONE, x3)
    O = canvas(x2, x4)
    return O


# rotate the grid a quarter turn counterclockwise
def solve_ed36ccf7(I):
    O = rot270(I)
    return O


# two uniform rows become a checkerboard of their two colors
def solve_e9afcf9a(I):
    x1 = astuple(TWO, ONE)
    x2 = crop(I, ORIGIN, x1)
    x3 = hmirror(x2)
    x4 = hconcat(x2, x3)
    x5 = hconcat(x4, x4)
    O = hconcat(x5, x4)
    return O


# the red cell is replaced by four colored diagonal neighbours
def solve_a9f96cdd(I):
    x1 = ofcolor(I, TWO)
    x2 = shift(x1, NEG_UNITY)
    x3 = shift(x1, UP_RIGHT)
    x4 = shift(x1, DOWN_LEFT)
    x5 = shift(x1, UNITY)
    x6 = shape(I)
    x7 = canvas(ZERO, x6)
    x8 = fill(x7, THREE, x2)
    x9 = fill(x8, SIX, x3)
    x10 = fill(x9, EIGHT, x4)
    O = fill(x10, SEVEN, x5)
    return O


# append the left-right mirror image to the right
def solve_6d0aefbc(I):
    x1 = vmirror(I)
    O = hconcat(I, x1)
    return O


# append the upside-down mirror image below
def solve_6fa7a44f(I):
    x1 = hmirror(I)
    O = vconcat(I, x1)
    return O


# append the upside-down mirror image below
def solve_8be77c9e(I):
    x1 = hmirror(I)
    O = vconcat(I, x1)
    return O


# orange becomes gray
def solve_c8f0f002(I):
    O = replace(I, SEVEN, FIVE)
    return O


# append the left-right mirror image to the right
def solve_c9e6f938(I):
    x1 = vmirror(I)
    O = hconcat(I, x1)
    return O


# overlay the two halves: a cell is magenta where either half is colored
def solve_dae9d2b5(I):
    x1 = lefthalf(I)
    x2 = righthalf(I)
    O = cellwise(x1, x2, SIX)
    return O


# red where both the top half and the bottom half are empty
def solve_fafffa47(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(ZERO, x6)
    O = fill(x7, TWO, x5)
    return O


# isolated single red cells turn blue
def solve_aedd82e4(I):
    x1 = objects(I, T, F, F)
    x2 = colorfilter(x1, TWO)
    x3 = sizefilter(x2, ONE)
    x4 = merge(x3)
    O = fill(I, ONE, x4)
    return O


# red where both blocks left and right of the gray bar are blue
def solve_0520fde7(I):
    x1 = lefthalf(I)
    x2 = righthalf(I)
    x3 = cellwise(x1, x2, ZERO)
    O = replace(x3, ONE, TWO)
    return O


# stack the upside-down image on top of the grid
def solve_4c4377d9(I):
    x1 = hmirror(I)
    O = vconcat(x1, I)
    return O


# magenta becomes red
def solve_b1948b0a(I):
    O = replace(I, SIX, TWO)
    return O


# the blue cells drop two rows, into the gray floor
def solve_3618c87e(I):
    x1 = ofcolor(I, ONE)
    x2 = fill(I, ZERO, x1)
    x3 = shift(x1, TWO_BY_ZERO)
    O = fill(x2, ONE, x3)
    return O


# extend the border rows and columns outwards, leaving the corners black
def solve_49d1d64f(I):
    x1 = width(I)
    x2 = astuple(ONE, x1)
    x3 = crop(I, ORIGIN, x2)
    x4 = hmirror(I)
    x5 = crop(x4, ORIGIN, x2)
    x6 = vconcat(x3, I)
    x7 = vconcat(x6, x5)
    x8 = dmirror(x7)
    x9 = width(x8)
    x10 = astuple(ONE, x9)
    x11 = crop(x8, ORIGIN, x10)
    x12 = hmirror(x8)
    x13 = crop(x12, ORIGIN, x10)
    x14 = vconcat(x11, x8)
    x15 = vconcat(x14, x13)
    x16 = dmirror(x15)
    x17 = asindices(x16)
    x18 = corners(x17)
    O = fill(x16, ZERO, x18)
    return O


# of the four quadrants, output the one that differs from the other three
def solve_88a62173(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = lefthalf(x1)
    x4 = righthalf(x1)
    x5 = lefthalf(x2)
    x6 = righthalf(x2)
    x7 = astuple(x3, x4)
    x8 = astuple(x5, x6)
    x9 = combine(x7, x8)
    O = leastcommon(x9)
    return O


# the cyan shape moves down one row and turns red
def solve_a79310a0(I):
    x1 = ofcolor(I, EIGHT)
    x2 = shift(x1, DOWN)
    x3 = shape(I)
    x4 = canvas(ZERO, x3)
    O = fill(x4, TWO, x2)
    return O


# the color of the noise decides which 3x3 gray symbol is drawn
def solve_d4469b4b(I):
    x1 = palette(I)
    x2 = other(x1, ZERO)
    x3 = equality(x2, ONE)
    x4 = equality(x2, TWO)
    x5 = branch(x4, RIGHT, TWO_BY_TWO)
    x6 = branch(x3, UNITY, x5)
    x7 = hfrontier(x6)
    x8 = vfrontier(x6)
    x9 = combine(x7, x8)
    x10 = canvas(ZERO, THREE_BY_THREE)
    O = fill(x10, FIVE, x9)
    return O


# swap gray and cyan
def solve_d511f180(I):
    O = switch(I, FIVE, EIGHT)
    return O


# gray takes the other color, the other color becomes black
def solve_f76d97a5(I):
    x1 = palette(I)
    x2 = other(x1, FIVE)
    x3 = replace(I, x2, ZERO)
    O = replace(x3, FIVE, x2)
    return O


# keep only the middle column
def solve_d23f8c26(I):
    x1 = width(I)
    x2 = halve(x1)
    x3 = tojvec(x2)
    x4 = vfrontier(x3)
    x5 = asindices(I)
    x6 = difference(x5, x4)
    O = fill(I, ZERO, x6)
    return O


# mirror the bottom half into the empty top half
def solve_f25ffba3(I):
    x1 = bottomhalf(I)
    x2 = hmirror(x1)
    O = vconcat(x2, x1)
    return O


# draw a cyan frame along the border of the grid
def solve_6f8cd79b(I):
    x1 = asindices(I)
    x2 = box(x1)
    O = fill(I, EIGHT, x2)
    return O


# repeat the grid twice side by side
def solve_a416b8f3(I):
    O = hconcat(I, I)
    return O


# continue the vertical pattern to nine rows and turn it red
def solve_017c7c7b(I):
    x1 = asobject(I)
    x2 = vperiod(x1)
    x3 = toivec(x2)
    x4 = double(x2)
    x5 = toivec(x4)
    x6 = shift(x1, x3)
    x7 = shift(x1, x5)
    x8 = astuple(NINE, THREE)
    x9 = canvas(ZERO, x8)
    x10 = paint(x9, x1)
    x11 = paint(x10, x6)
    x12 = paint(x11, x7)
    O = replace(x12, ONE, TWO)
    return O


# of the three stacked squares, output the one that is not diagonally symmetric
def solve_662c240a(I):
    x1 = vsplit(I, THREE)
    x2 = fork(equality, identity, dmirror)
    x3 = compose(flip, x2)
    O = extract(x1, x3)
    return O


# green where both blocks left and right of the blue bar are empty
def solve_f2829549(I):
    x1 = lefthalf(I)
    x2 = righthalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(ZERO, x6)
    O = fill(x7, THREE, x5)
    return O


# green shapes of more than one cell turn cyan
def solve_67385a82(I):
    x1 = objects(I, T, F, F)
    x2 = colorfilter(x1, THREE)
    x3 = sizefilter(x2, ONE)
    x4 = difference(x2, x3)
    x5 = merge(x4)
    O = fill(I, EIGHT, x5)
    return O


# the grid holds its pattern twice: keep one copy
def solve_7b7f7511(I):
    x1 = portrait(I)
    x2 = tophalf(I)
    x3 = lefthalf(I)
    O = branch(x1, x2, x3)
    return O


# red where both the top block and the bottom block are empty
def solve_94f9d214(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(ZERO, x6)
    O = fill(x7, TWO, x5)
    return O


# cyan where both blocks left and right of the blue bar are empty
def solve_1b2d62fb(I):
    x1 = lefthalf(I)
    x2 = righthalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(ZERO, x6)
    O = fill(x7, EIGHT, x5)
    return O


# overlay the four 3x3 corners of the grid
def solve_bc1d5164(I):
    x1 = leastcolor(I)
    x2 = ofcolor(I, x1)
    x3 = invert(FOUR)
    x4 = tojvec(x3)
    x5 = toivec(NEG_TWO)
    x6 = astuple(NEG_TWO, x3)
    x7 = shift(x2, x4)
    x8 = shift(x2, x5)
    x9 = shift(x2, x6)
    x10 = combine(x2, x7)
    x11 = combine(x8, x9)
    x12 = combine(x10, x11)
    x13 = canvas(ZERO, THREE_BY_THREE)
    O = fill(x13, x1, x12)
    return O


# every colored cell falls to the bottom of its column
def solve_1e0a9b12(I):
    x1 = dmirror(I)
    x2 = rbind(order, positive)
    x3 = apply(x2, x1)
    O = dmirror(x3)
    return O


# tile the grid with its four quarter-turn rotations
def solve_46442a0e(I):
    x1 = rot90(I)
    x2 = rot180(I)
    x3 = rot270(I)
    x4 = hconcat(I, x1)
    x5 = hconcat(x3, x2)
    O = vconcat(x4, x5)
    return O


# mirror the grid to the right and then downwards
def solve_62c24649(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O


# green where both the top block and the bottom block are empty
def solve_6430c8c4(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(ZERO, x6)
    O = fill(x7, THREE, x5)
    return O


# mirror the grid to the right and then downwards
def solve_67e8384a(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O


# list the colors of the stripes in order, one cell per stripe
def solve_746b3537(I):
    x1 = vmirror(I)
    x2 = equality(x1, I)
    x3 = dmirror(I)
    x4 = branch(x2, x3, I)
    x5 = objects(x4, T, F, F)
    x6 = order(x5, leftmost)
    x7 = apply(color, x6)
    x8 = initset(x7)
    x9 = totuple(x8)
    x10 = dmirror(x9)
    O = branch(x2, x10, x9)
    return O


# tile the grid with its four quarter-turn rotations
def solve_7fe24cdd(I):
    x1 = rot90(I)
    x2 = rot180(I)
    x3 = rot270(I)
    x4 = hconcat(I, x1)
    x5 = hconcat(x3, x2)
    O = vconcat(x4, x5)
    return O


# mirror left, then stack flipped, plain and flipped copies
def solve_8d5021e8(I):
    x1 = vmirror(I)
    x2 = hconcat(x1, I)
    x3 = hmirror(x2)
    x4 = vconcat(x3, x2)
    O = vconcat(x4, x3)
    return O


# each color of the 2x2 block is copied as a 2x2 square to the opposite corner
def solve_93b581b8(I):
    x1 = objects(I, F, F, T)
    x2 = first(x1)
    x3 = subgrid(x2, I)
    x4 = rot180(x3)
    x5 = upscale(x4, TWO)
    x6 = lefthalf(x5)
    x7 = righthalf(x5)
    x8 = astuple(FOUR, TWO)
    x9 = canvas(ZERO, x8)
    x10 = hconcat(x6, x9)
    x11 = hconcat(x10, x7)
    x12 = tophalf(x11)
    x13 = bottomhalf(x11)
    x14 = astuple(TWO, SIX)
    x15 = canvas(ZERO, x14)
    x16 = vconcat(x12, x15)
    x17 = vconcat(x16, x13)
    x18 = asobject(x17)
    x19 = ulcorner(x2)
    x20 = add(x19, NEG_TWO)
    x21 = shift(x18, x20)
    O = underpaint(I, x21)
    return O


# reflect the grid along its main diagonal
def solve_9dfd6313(I):
    O = dmirror(I)
    return O


# extend the cyan line vertically and the red line horizontally, yellow where they cross
def solve_bdad9b1f(I):
    x1 = ofcolor(I, EIGHT)
    x2 = mapply(vfrontier, x1)
    x3 = ofcolor(I, TWO)
    x4 = mapply(hfrontier, x3)
    x5 = fill(I, EIGHT, x2)
    x6 = fill(x5, TWO, x4)
    x7 = intersection(x2, x4)
    O = fill(x6, FOUR, x7)
    return O


# green where exactly one of the top and bottom blocks is colored
def solve_99b1bc43(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = ofcolor(x1, ONE)
    x4 = ofcolor(x2, TWO)
    x5 = combine(x3, x4)
    x6 = intersection(x3, x4)
    x7 = difference(x5, x6)
    x8 = shape(x1)
    x9 = canvas(ZERO, x8)
    O = fill(x9, THREE, x7)
    return O


# green where at least one of the top and bottom blocks is colored
def solve_ce4f8723(I):
    x1 = tophalf(I)
    x2 = bottomhalf(I)
    x3 = ofcolor(x1, ZERO)
    x4 = ofcolor(x2, ZERO)
    x5 = intersection(x3, x4)
    x6 = shape(x1)
    x7 = canvas(THREE, x6)
    O = fill(x7, ZERO, x5)
    return O


# complete each cyan L-shape to a 2x2 square with a blue cell
def solve_3aa6fb7a(I):
    x1 = objects(I, T, F, T)
    x2 = mapply(delta, x1)
    O = fill(I, ONE, x2)
    return O


# red fills the gap between two blue cells in a row
def solve_a699fb00(I):
    x1 = ofcolor(I, ONE)
    x2 = shift(x1, RIGHT)
    x3 = shift(x1, LEFT)
    x4 = intersection(x2, x3)
    O = fill(I, TWO, x4)
    return O


# each blue cell gets red, orange, magenta and cyan neighbours
def solve_d364b489(I):
    x1 = ofcolor(I, ONE)
    x2 = shift(x1, UP)
    x3 = shift(x1, LEFT)
    x4 = shift(x1, RIGHT)
    x5 = shift(x1, DOWN)
    x6 = fill(I, TWO, x2)
    x7 = fill(x6, SEVEN, x3)
    x8 = fill(x7, SIX, x4)
    O = fill(x8, EIGHT, x5)
    return O


# keep only the tallest bar (blue) and the shortest bar (red)
def solve_a61f2674(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    x3 = argmin(x1, size)
    x4 = shape(I)
    x5 = canvas(ZERO, x4)
    x6 = fill(x5, ONE, x2)
    O = fill(x6, TWO, x3)
    return O


# every hollow 3x3 square becomes a red plus sign
def solve_6c434453(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, EIGHT)
    x3 = merge(x2)
    x4 = fill(I, ZERO, x3)
    x5 = apply(center, x2)
    x6 = mapply(dneighbors, x5)
    x7 = combine(x5, x6)
    O = fill(x4, TWO, x7)
    return O


# the two shapes that match turn blue, the odd one out turns red
def solve_b230c067(I):
    x1 = objects(I, T, T, T)
    x2 = totuple(x1)
    x3 = apply(normalize, x2)
    x4 = leastcommon(x3)
    x5 = matcher(normalize, x4)
    x6 = extract(x1, x5)
    x7 = replace(I, EIGHT, ONE)
    O = fill(x7, TWO, x6)
    return O


# shapes of exactly six cells turn red, all other shapes blue
def solve_d2abd087(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, SIX)
    x3 = merge(x2)
    x4 = replace(I, FIVE, ONE)
    O = fill(x4, TWO, x3)
    return O


# color the four bars by rank of height: tallest blue, then red, green, yellow
def solve_08ed6ac7(I):
    x1 = objects(I, T, F, T)
    x2 = order(x1, size)
    x3 = interval(FOUR, ZERO, NEG_ONE)
    x4 = mpapply(recolor, x3, x2)
    O = paint(I, x4)
    return O


# every pair of adjacent red cells gets a green frame
def solve_b27ca6d3(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, TWO)
    x3 = mapply(outbox, x2)
    O = fill(I, THREE, x3)
    return O


# cut out the largest shape from the noisy grid
def solve_1f85a75f(I):
    x1 = objects(I, T, T, T)
    x2 = argmax(x1, size)
    O = subgrid(x2, I)
    return O


# cut out the largest shape
def solve_be94b721(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    O = subgrid(x2, I)
    return O


# of the 3x3 blocks, output the one whose pattern differs from the rest
def solve_a87f7484(I):
    x1 = height(I)
    x2 = width(I)
    x3 = divide(x1, THREE)
    x4 = divide(x2, THREE)
    x5 = vsplit(I, x3)
    x6 = hsplit(I, x4)
    x7 = portrait(I)
    x8 = branch(x7, x5, x6)
    x9 = rbind(ofcolor, ZERO)
    x10 = apply(x9, x8)
    x11 = leastcommon(x10)
    x12 = matcher(x9, x11)
    O = extract(x8, x12)
    return O


# hollow red rectangles are replaced by their green filled interior
def solve_d5d6de2d(I):
    x1 = objects(I, T, F, T)
    x2 = mapply(delta, x1)
    x3 = replace(I, TWO, ZERO)
    O = fill(x3, THREE, x2)
    return O


# scale the grid up by a factor of two
def solve_c59eb873(I):
    O = upscale(I, TWO)
    return O


# scale the grid up by the number of colors it contains
def solve_b91ae062(I):
    x1 = numcolors(I)
    x2 = decrement(x1)
    O = upscale(I, x2)
    return O


# the top-left 2x2 corner of the repeating pattern
def solve_d10ecb37(I):
    O = crop(I, ORIGIN, TWO_BY_TWO)
    return O


# scale the grid up by a factor of three
def solve_9172f3a0(I):
    O = upscale(I, THREE)
    return O


# the grid repeats three times side by side: keep one copy
def solve_2dee498d(I):
    x1 = hsplit(I, THREE)
    O = first(x1)
    return O


# cut out the colored part of the blue grid, blue becomes black
def solve_a740d043(I):
    x1 = objects(I, T, T, T)
    x2 = merge(x1)
    x3 = subgrid(x2, I)
    O = replace(x3, ONE, ZERO)
    return O


# remove the gray noise and scale the 3x3 blocks down to single cells
def solve_5614dbcf(I):
    x1 = replace(I, FIVE, ZERO)
    O = downscale(x1, THREE)
    return O


# mirror the grid to the right and then downwards
def solve_3af2c5a8(I):
    x1 = vmirror(I)
    x2 = hconcat(I, x1)
    x3 = hmirror(x2)
    O = vconcat(x2, x3)
    return O


# scale the grid up by the number of colors it contains
def solve_ac0a08a4(I):
    x1 = numcolors(I)
    x2 = decrement(x1)
    O = upscale(I, x2)
    return O


# slide the red shape towards the cyan square until they touch
def solve_05f2a901(I):
    x1 = objects(I, T, F, T)
    x2 = colorfilter(x1, TWO)
    x3 = first(x2)
    x4 = colorfilter(x1, EIGHT)
    x5 = first(x4)
    x6 = gravitate(x3, x5)
    O = move(I, x3, x6)
    return O


# surround every red cell with blue on its empty neighbours
def solve_dc1df850(I):
    x1 = ofcolor(I, TWO)
    x2 = mapply(neighbors, x1)
    O = underfill(I, ONE, x2)
    return O


# surround every gray cell with a blue ring
def solve_4258a5f9(I):
    x1 = ofcolor(I, FIVE)
    x2 = mapply(neighbors, x1)
    O = underfill(I, ONE, x2)
    return O


# color gray shapes by size: four cells blue, three red, two green
def solve_6e82a1ae(I):
    x1 = objects(I, T, F, T)
    x2 = sizefilter(x1, FOUR)
    x3 = sizefilter(x1, THREE)
    x4 = sizefilter(x1, TWO)
    x5 = merge(x2)
    x6 = merge(x3)
    x7 = merge(x4)
    x8 = fill(I, ONE, x5)
    x9 = fill(x8, TWO, x6)
    O = fill(x9, THREE, x7)
    return O


# longest bar blue, shortest bar red, the remaining bar yellow
def solve_ea32f347(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    x3 = argmin(x1, size)
    x4 = replace(I, FIVE, FOUR)
    x5 = fill(x4, ONE, x2)
    O = fill(x5, TWO, x3)
    return O


# the shape takes the color of the single corner cell, which disappears
def solve_aabf363d(I):
    x1 = objects(I, T, F, T)
    x2 = argmax(x1, size)
    x3 = leastcolor(I)
    x4 = replace(I, x3, ZERO)
    O = fill(x4, x3, x2)
    return O


# closed rectangular loops turn green, open shapes stay blue
def solve_810b9b61(I):
    x1 = objects(I, T, T, T)
    x2 = fork(equality, toindices, box)
    x3 = chain(positive, size, delta)
    x4 = fork(both, x2, x3)
    x5 = mfilter(x1, x4)
    O = fill(I, THREE, x5)
    return O


# fill the inside of the larger rectangle red and of the smaller one blue
def solve_694f12f3(I):
    x1 = objects(I, T, F, F)
    x2 = colorfilter(x1, FOUR)
    x3 = argmax(x2, size)
    x4 = argmin(x2, size)
    x5 = backdrop(x3)
    x6 = box(x3)
    x7 = difference(x5, x6)
    x8 = backdrop(x4)
    x9 = box(x4)
    x10 = difference(x8, x9)
    x11 = fill(I, TWO, x7)
    O = fill(x11, ONE, x10)
    return O


# every gray cell grows into a blue 3x3 square
def solve_ce22a75a(I):
    x1 = ofcolor(I, FIVE)
    x2 = mapply(neighbors, x1)
    x3 = combine(x1, x2)
    O = fill(I, ONE, x3)
    return O


# fill hollow squares by the size of their hole: 1 magenta, 4 orange, 9 cyan
def solve_c0f76784(I):
    x1 = objects(I, T, F, T)
    x2 = apply(delta, x1)
    x3 = sizefilter(x2, ONE)
    x4 = sizefilter(x2, FOUR)
    x5 = sizefilter(x2, NINE)
    x6 = merge(x3)
    x7 = merge(x4)
    x8 = merge(x5)
    x9 = fill(I, SIX, x6)
    x10 = fill(x9, SEVEN, x7)
    O = fill(x10, EIGHT, x8)
    return O


# list the minority block colors from most to least frequent, as a column
def solve_f8b3ba0a(I):
    x1 = palette(I)
    x2 = remove(ZERO, x1)
    x3 = lbind(colorcount, I)
    x4 = compose(invert, x3)
    x5 = order(x2, x4)
    x6 = first(x5)
    x7 = remove(x6, x5)
    x8 = initset(x7)
    x9 = totuple(x8)
    O = dmirror(x9)
    return O
