// RUN: loom-opt %s -split-input-file -loom-lower-to-linalg | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-lower-to-linalg | FileCheck %s --check-prefix=NOLOOM

// Tests that no loom op is left behind in any case of this file.
// NOLOOM-LABEL: func.func @binary_broadcast
// NOLOOM-NOT: loom.

// Tests that broadcasting binary ops read size-1 and missing dimensions
// through constant-0 / dropped indexing map results.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>, %[[C:.+]]: tensor<4x1xf32>)
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[ADD:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK: %[[MUL:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK-SAME: ins(%[[ADD]], %[[C]] : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK: arith.mulf
// CHECK: return %[[MUL]]
func.func @binary_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = loom.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = loom.mul %0, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Tests that each elementwise op gets its scalar body.
// CHECK-LABEL: func.func @elementwise_bodies
// CHECK: arith.subf
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.tanh
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.maximumf %{{.+}}, %[[ZERO]] : f32
// CHECK: arith.constant 4.471500e-02 : f32
// CHECK: math.tanh
// CHECK: arith.cmpf ogt
// CHECK: arith.select
func.func @elementwise_bodies(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = loom.div %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = loom.maximum %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = loom.minimum %2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = loom.neg %3 : tensor<4xf32>
  %5 = loom.exp %4 : tensor<4xf32>
  %6 = loom.log %5 : tensor<4xf32>
  %7 = loom.tanh %6 : tensor<4xf32>
  %8 = loom.sqrt %7 : tensor<4xf32>
  %9 = loom.rsqrt %8 : tensor<4xf32>
  %10 = loom.relu %9 : tensor<4xf32>
  %11 = loom.gelu %10 : tensor<4xf32>
  %12 = loom.heaviside %11 : tensor<4xf32>
  return %12 : tensor<4xf32>
}

// -----

// Tests that transposed matmul operands become linalg.matmul indexing maps
// (no data movement) over a zero-filled accumulator.
// CHECK-DAG: #[[AT:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[BT:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed
// CHECK-SAME: (%[[A:.+]]: tensor<8x4xf32>, %[[B:.+]]: tensor<16x8xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: %[[MM:.+]] = linalg.matmul indexing_maps = [#[[AT]], #[[BT]], #[[C]]] ins(%[[A]], %[[B]] : tensor<8x4xf32>, tensor<16x8xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[MM]]
func.func @matmul_transposed(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b transpose_a transpose_b : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Tests that a plain matmul is a linalg.matmul with the default maps.
// CHECK-LABEL: func.func @matmul_plain
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%{{.+}} : tensor<4x16xf32>)
func.func @matmul_plain(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Tests that a batched matmul collapses its batch dimensions into one and
// becomes linalg.batch_matmul.
// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4x8xf32>, %[[B:.+]]: tensor<2x3x8x5xf32>)
// CHECK-DAG: %[[B3:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x5xf32> into tensor<6x8x5xf32>
// CHECK-DAG: %[[A3:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
// CHECK: %[[MM:.+]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<6x4x8xf32>, tensor<6x8x5xf32>) outs(%{{.+}} : tensor<6x4x5xf32>)
// CHECK: tensor.expand_shape %{{.+}} output_shape [2, 3, 4, 5] : tensor<120xf32> into tensor<2x3x4x5xf32>
func.func @matmul_batched(%a: tensor<2x3x4x8xf32>, %b: tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = loom.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Tests that a batched transposed matmul keeps the transpose in the maps.
// CHECK-DAG: #[[AT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_batched_transpose_a
// CHECK: linalg.batch_matmul indexing_maps = [#[[AT]], #[[B]], #[[C]]] ins(%{{.+}}, %{{.+}} : tensor<2x8x4xf32>, tensor<2x8x5xf32>) outs(%{{.+}} : tensor<2x4x5xf32>)
func.func @matmul_batched_transpose_a(%a: tensor<2x8x4xf32>, %b: tensor<2x8x5xf32>) -> tensor<2x4x5xf32> {
  %0 = loom.matmul %a, %b transpose_a : (tensor<2x8x4xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// Tests that a shared rank-2 rhs folds the lhs batch into the rows of one
// linalg.matmul.
// CHECK-LABEL: func.func @matmul_shared_rhs
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x8xf32>, %[[B:.+]]: tensor<8x5xf32>)
// CHECK: %[[A2:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: linalg.matmul ins(%[[A2]], %[[B]] : tensor<8x8xf32>, tensor<8x5xf32>) outs(%{{.+}} : tensor<8x5xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: tensor.expand_shape %{{.+}} output_shape [2, 4, 5]
func.func @matmul_shared_rhs(%a: tensor<2x4x8xf32>, %b: tensor<8x5xf32>) -> tensor<2x4x5xf32> {
  %0 = loom.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// Tests that reductions become linalg.reduce: sum and mean from 0, max from
// -inf, mean scaled by 1/count, keepdim restored with expand_shape.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[Z0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[I0:.+]] = linalg.fill ins(%[[Z0]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[I0]] : tensor<4xf32>) dimensions = [1]
// CHECK: arith.addf
// CHECK: %[[KEEP:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[MEANSUM:.+]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%{{.+}} : tensor<8xf32>) dimensions = [0]
// CHECK: %[[MEAN:.+]] = linalg.generic
// CHECK-SAME: ins(%[[MEANSUM]] : tensor<8xf32>)
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[I2:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[MAX:.+]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[I2]] : tensor<4xf32>) dimensions = [1]
// CHECK: arith.maximumf
// CHECK: return %[[KEEP]], %[[MEAN]], %[[MAX]]
func.func @reductions(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<8xf32>, tensor<4xf32>) {
  %0 = loom.sum %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = loom.mean %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %2 = loom.reduce_max %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Tests that embedding and one_hot are generics over the output that read
// the index tensor and compare or gather with linalg.index.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @lookups
// CHECK-SAME: (%[[T:.+]]: tensor<16x4xf32>, %[[I:.+]]: tensor<2x3xi32>)
// CHECK: %[[EMB:.+]] = linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x3xi32>)
// CHECK: %[[ID:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COL:.+]] = linalg.index 2 : index
// CHECK: tensor.extract %[[T]][%[[ID]], %[[COL]]] : tensor<16x4xf32>
// CHECK: } -> tensor<2x3x4xf32>
// CHECK: %[[HOT:.+]] = linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], {{.*}} ins(%[[I]] : tensor<2x3xi32>)
// CHECK: %[[ID2:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[C2:.+]] = linalg.index 2 : index
// CHECK: %[[EQ:.+]] = arith.cmpi eq, %[[ID2]], %[[C2]] : index
// CHECK: arith.select %[[EQ]]
// CHECK: } -> tensor<2x3x16xf32>
// CHECK: return %[[EMB]], %[[HOT]]
func.func @lookups(%t: tensor<16x4xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3x4xf32>, tensor<2x3x16xf32>) {
  %0 = loom.embedding %t, %i : (tensor<16x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %1 = loom.one_hot %i : tensor<2x3xi32> -> tensor<2x3x16xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x16xf32>
}

// -----

// Tests that causal_mask selects the fill where the column index exceeds the
// row index of the last two dimensions.
// CHECK-LABEL: func.func @causal_mask
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[ABOVE:.+]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: %[[FILL:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[ABOVE]], %[[FILL]], %{{.+}} : f32
func.func @causal_mask(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %0 = loom.causal_mask %x fill 0xFFF0000000000000 : tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// Tests that segment_mask reads the segments along the rows and along the
// columns and keeps an entry only where they are equal.
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @segment_mask
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4x4xf32>, %[[D:.+]]: tensor<2x4xi32>)
// CHECK: linalg.generic {{.+}}#[[ROW]], #[[COL]]
// CHECK-SAME: ins(%[[X]], %[[D]], %[[D]] :
// CHECK: ^bb0(%[[V:.+]]: f32, %[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK: %[[FILL:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[SAME]], %[[V]], %[[FILL]] : f32
func.func @segment_mask(%x: tensor<2x3x4x4xf32>, %docs: tensor<2x4xi32>) -> tensor<2x3x4x4xf32> {
  %0 = loom.segment_mask %x, %docs fill 0xFFF0000000000000 : tensor<2x3x4x4xf32>, tensor<2x4xi32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// Tests that document_mask reads the query documents and positions along
// the rows, the key ones along the columns, and keeps an entry only where
// the documents are equal and the key's position is not after the query's.
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @document_mask
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x5xf32>, %[[QD:.+]]: tensor<1x3xi32>, %[[QP:.+]]: tensor<1x3xi32>, %[[KD:.+]]: tensor<1x5xi32>, %[[KP:.+]]: tensor<1x5xi32>)
// CHECK: linalg.generic {{.+}}#[[ROW]], #[[ROW]], #[[COL]], #[[COL]]
// CHECK-SAME: ins(%[[X]], %[[QD]], %[[QP]], %[[KD]], %[[KP]] :
// CHECK: ^bb0(%[[V:.+]]: f32, %[[A:.+]]: i32, %[[AP:.+]]: i32, %[[B:.+]]: i32, %[[BP:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK: %[[BEFORE:.+]] = arith.cmpi sle, %[[BP]], %[[AP]] : i32
// CHECK: %[[SEEN:.+]] = arith.andi %[[SAME]], %[[BEFORE]] : i1
// CHECK: %[[FILL:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[SEEN]], %[[V]], %[[FILL]] : f32
func.func @document_mask(%x: tensor<1x2x3x5xf32>, %qd: tensor<1x3xi32>, %qp: tensor<1x3xi32>, %kd: tensor<1x5xi32>, %kp: tensor<1x5xi32>) -> tensor<1x2x3x5xf32> {
  %0 = loom.document_mask %x, %qd, %qp, %kd, %kp fill 0xFFF0000000000000 : tensor<1x2x3x5xf32>, tensor<1x3xi32>, tensor<1x5xi32>
  return %0 : tensor<1x2x3x5xf32>
}

// -----

// Tests that shape ops become tensor reshapes, linalg.transpose, slices and
// a broadcasting generic.
// CHECK-DAG: #[[BC:.+]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>, %[[Y:.+]]: tensor<1x6xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<4x6xf32>) outs(%{{.+}} : tensor<6x4xf32>) permutation = [1, 0]
// CHECK: tensor.extract_slice %[[X]][0, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<1x6xf32>
// CHECK: %[[S1:.+]] = tensor.extract_slice %[[X]][1, 0] [3, 6] [1, 1] : tensor<4x6xf32> to tensor<3x6xf32>
// CHECK: %[[C0:.+]] = tensor.insert_slice %[[X]] into %{{.+}}[0, 0] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<4x12xf32>
// CHECK: %[[C1:.+]] = tensor.insert_slice %[[X]] into %[[C0]][0, 6] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<4x12xf32>
// CHECK: %[[B:.+]] = linalg.generic {indexing_maps = [#[[BC]], #{{.+}}], {{.*}} ins(%[[Y]] : tensor<1x6xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[FLAT]], %[[T]], %[[S1]], %[[C1]], %[[B]]
func.func @shapes(%x: tensor<4x6xf32>, %y: tensor<1x6xf32>) -> (tensor<24xf32>, tensor<6x4xf32>, tensor<3x6xf32>, tensor<4x12xf32>, tensor<2x4x6xf32>) {
  %0 = loom.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  %1 = loom.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %2, %3 = loom.split %x axis = 0 : tensor<4x6xf32> -> tensor<1x6xf32>, tensor<3x6xf32>
  %4 = loom.concat %x, %x axis = 1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
  %5 = loom.broadcast_to %y : tensor<1x6xf32> -> tensor<2x4x6xf32>
  return %0, %1, %3, %4, %5 : tensor<24xf32>, tensor<6x4xf32>, tensor<3x6xf32>, tensor<4x12xf32>, tensor<2x4x6xf32>
}

// -----

// Tests that reshapes to and from 0-d tensors go through a rank-1 tensor.
// CHECK-LABEL: func.func @reshape_scalar
// CHECK: %[[E1:.+]] = tensor.expand_shape %{{.+}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.expand_shape %[[E1]] {{\[}}[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
// CHECK: %[[C1:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<1x1xf64> into tensor<1xf64>
// CHECK: tensor.collapse_shape %[[C1]] [] : tensor<1xf64> into tensor<f64>
func.func @reshape_scalar(%x: tensor<f32>, %y: tensor<1x1xf64>) -> (tensor<1x1xf32>, tensor<f64>) {
  %0 = loom.reshape %x : tensor<f32> -> tensor<1x1xf32>
  %1 = loom.reshape %y : tensor<1x1xf64> -> tensor<f64>
  return %0, %1 : tensor<1x1xf32>, tensor<f64>
}

// -----

// Tests that lr_schedule becomes scalar arithmetic: a cosine decay from lr
// to min_lr selected against a linear warmup.
// CHECK-LABEL: func.func @lr_schedule
// CHECK-SAME: (%[[STEP:.+]]: tensor<i64>)
// CHECK: %[[S:.+]] = tensor.extract %[[STEP]][] : tensor<i64>
// CHECK: %[[SF:.+]] = arith.sitofp %[[S]] : i64 to f32
// CHECK: %[[DECAY:.+]] = arith.constant 1.000000e+02 : f32
// CHECK: %[[WARM:.+]] = arith.constant 1.000000e+01 : f32
// CHECK: %[[D:.+]] = arith.subf %[[SF]], %[[WARM]] : f32
// CHECK: arith.divf %[[D]], %[[DECAY]] : f32
// CHECK: math.cos
// CHECK: arith.constant 4.500000e-04 : f32
// CHECK: %[[MIN:.+]] = arith.constant 9.99999974E-5 : f32
// CHECK: %[[COS:.+]] = arith.addf %[[MIN]], %{{.+}} : f32
// CHECK: %[[IN:.+]] = arith.cmpf olt, %[[SF]], %{{.+}} : f32
// CHECK: %[[RAMP:.+]] = arith.mulf %{{.+}}, %[[SF]] : f32
// CHECK: %[[LR:.+]] = arith.select %[[IN]], %[[RAMP]], %[[COS]] : f32
// CHECK: tensor.from_elements %[[LR]] : tensor<f32>
func.func @lr_schedule(%s: tensor<i64>) -> tensor<f32> {
  %0 = loom.lr_schedule %s {lr = 1.0e-3, warmup_steps = 10 : i64, decay_steps = 100 : i64, min_lr = 1.0e-4} : tensor<i64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that a constant schedule is just lr, with no warmup or decay code.
// CHECK-LABEL: func.func @lr_schedule_constant
// CHECK: %[[LR:.+]] = arith.constant 1.000000e-03 : f64
// CHECK-NOT: math.cos
// CHECK-NOT: arith.select
// CHECK: tensor.from_elements %[[LR]] : tensor<f64>
func.func @lr_schedule_constant(%s: tensor<i64>) -> tensor<f64> {
  %0 = loom.lr_schedule %s {lr = 1.0e-3} : tensor<i64> -> tensor<f64>
  return %0 : tensor<f64>
}
