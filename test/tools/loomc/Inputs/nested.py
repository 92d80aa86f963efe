"""Prints an MLP-like model whose loss wraps its input in DEPTH nested
scf.execute_region ops (DEPTH + 3 levels of braces in all), after a comment
and a string attribute full of brackets, which do not count as nesting.

usage: nested.py DEPTH
"""
import sys

depth = int(sys.argv[1])
print('// ' + '{([<' * 1000)
print('module attributes {loom.task = {kind = "classify", features = 4 : i64, '
      'classes = 4 : i64, batch = 2 : i64}, loom.note = "' + '{' * 1000 + '"} {')
print('  loom.param @w : tensor<4x4xf32> init zeros')
print('  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, '
      '%y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {')
print('    %w = loom.get_param @w : tensor<4x4xf32>')
for i in range(depth):
    print('    %%r%d = scf.execute_region -> tensor<2x4xf32> {' % i)
if depth:
    print('    scf.yield %x : tensor<2x4xf32>')
for i in reversed(range(depth)):
    print('    }')
    print('    scf.yield %%r%d : tensor<2x4xf32>' % i if i else '', end='\n' if i else '')
print('    %h = loom.linear %r0, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>'
      if depth else
      '    %h = loom.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>')
print('    %l = loom.cross_entropy %h, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>')
print('    return %l : tensor<f32>')
print('  }')
print('}')
