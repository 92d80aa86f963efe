// RUN: loom-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// comm.mesh
//===----------------------------------------------------------------------===//

// Tests that a mesh needs at least one dimension.
// expected-error@+1 {{'comm.mesh' op shape must not be empty}}
comm.mesh @no_dims shape = [] axes = []

// -----

// Tests that a mesh size of zero is rejected.
// expected-error@+1 {{'comm.mesh' op every mesh size must be positive}}
comm.mesh @zero shape = [2, 0] axes = ["dp", "tp"]

// -----

// Tests that a negative mesh size is rejected.
// expected-error@+1 {{'comm.mesh' op every mesh size must be positive}}
comm.mesh @negative shape = [-4] axes = ["dp"]

// -----

// Tests that a mesh needs one axis name per dimension, not fewer.
// expected-error@+1 {{'comm.mesh' op expects one axis name per mesh dimension (2), got 1}}
comm.mesh @too_few shape = [2, 2] axes = ["dp"]

// -----

// Tests that a mesh needs one axis name per dimension, not more.
// expected-error@+1 {{'comm.mesh' op expects one axis name per mesh dimension (1), got 2}}
comm.mesh @too_many shape = [4] axes = ["dp", "tp"]

// -----

// Tests that an axis name must not be empty.
// expected-error@+1 {{'comm.mesh' op axis names must not be empty}}
comm.mesh @empty_name shape = [2, 2] axes = ["dp", ""]

// -----

// Tests that two axes of a mesh must not share a name.
// expected-error@+1 {{'comm.mesh' op axis 'dp' is named twice}}
comm.mesh @twice shape = [2, 2] axes = ["dp", "dp"]

// -----

//===----------------------------------------------------------------------===//
// comm.all_reduce
//===----------------------------------------------------------------------===//

// Tests that all_reduce must name an existing mesh.
func.func @no_mesh(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce' op 'world' does not name a comm.mesh}}
  %0 = comm.all_reduce %t over @world ["dp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that all_reduce must name a comm.mesh, not another kind of symbol.
func.func @world() {
  return
}
func.func @no_mesh_symbol(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce' op 'world' does not name a comm.mesh}}
  %0 = comm.all_reduce %t over @world ["dp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that all_reduce needs at least one axis.
func.func @no_axes(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce' op expects at least one axis}}
  %0 = comm.all_reduce %t over @world [] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that every axis of all_reduce must be an axis of its mesh.
func.func @no_such_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce' op axis 'tp' is not an axis of mesh @world}}
  %0 = comm.all_reduce %t over @world ["tp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @grid shape = [2, 2] axes = ["dp", "tp"]

// Tests that all_reduce must not list an axis twice.
func.func @dont_repeat_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce' op axis 'dp' is listed twice}}
  %0 = comm.all_reduce %t over @grid ["dp", "tp", "dp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_reduce result type must equal the operand type.
func.func @no_type_change(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.all_reduce' op result type must equal the operand type}}
  %0 = "comm.all_reduce"(%t) <{axes = ["dp"], mesh = @world, reduction = 0 : i32}> : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_reduce result element type must equal the operand's.
func.func @no_element_type_change(%t: tensor<8xf32>) -> tensor<8xf64> {
  // expected-error@+1 {{'comm.all_reduce' op result type must equal the operand type}}
  %0 = "comm.all_reduce"(%t) <{axes = ["dp"], mesh = @world, reduction = 0 : i32}> : (tensor<8xf32>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that all_reduce mean needs a float element type (i32).
func.func @no_mean_of_i32(%t: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error@+1 {{'comm.all_reduce' op mean needs a float element type}}
  %0 = comm.all_reduce %t over @world ["dp"] mean : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that a compressed all-reduce is a mean (not a sum).
func.func @compressed_sum(%t: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'comm.all_reduce' op compress_slot needs a mean of an f32 tensor}}
  %0 = comm.all_reduce %t over @world ["dp"] sum {compress_slot = 0 : i64} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that a compressed all-reduce averages f32 (not f64).
func.func @compressed_f64(%t: tensor<8x4xf64>) -> tensor<8x4xf64> {
  // expected-error@+1 {{'comm.all_reduce' op compress_slot needs a mean of an f32 tensor}}
  %0 = comm.all_reduce %t over @world ["dp"] mean {compress_slot = 0 : i64} : tensor<8x4xf64>
  return %0 : tensor<8x4xf64>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that a compressed all-reduce's slot is not negative.
func.func @compressed_negative(%t: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'comm.all_reduce' op attribute 'compress_slot' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = comm.all_reduce %t over @world ["dp"] mean {compress_slot = -1 : i64} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that a compressed all_reduce_start is a mean of f32 too.
func.func @compressed_start_max(%t: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'comm.all_reduce_start' op compress_slot needs a mean of an f32 tensor}}
  %tok, %f = comm.all_reduce_start %t over @world ["dp"] max {compress_slot = 0 : i64} : tensor<8x4xf32>
  %0 = comm.wait %tok, %f : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that all_reduce mean needs a float element type (i64).
func.func @no_mean_of_i64(%t: tensor<i64>) -> tensor<i64> {
  // expected-error@+1 {{'comm.all_reduce' op mean needs a float element type}}
  %0 = comm.all_reduce %t over @world ["dp"] mean : tensor<i64>
  return %0 : tensor<i64>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that collectives take f32, f64, i32 and i64 tensors only.
func.func @no_f16(%t: tensor<8xf16>) -> tensor<8xf16> {
  // expected-error@+1 {{'comm.all_reduce' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf16>'}}
  %0 = comm.all_reduce %t over @world ["dp"] sum : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduction kind is one of sum, mean and max.
func.func @no_min(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{expected string or keyword containing one of the following enum values for attribute 'reduction' [sum, mean, max]}}
  %0 = comm.all_reduce %t over @world ["dp"] min : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// comm.reduce_scatter
//===----------------------------------------------------------------------===//

// Tests that reduce_scatter must name an existing mesh, even when its result
// is shaped for the mesh it meant.
func.func @no_mesh(%t: tensor<8x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op 'world' does not name a comm.mesh}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<8x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that reduce_scatter needs at least one axis.
func.func @no_axes(%t: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op expects at least one axis}}
  %0 = comm.reduce_scatter %t over @world [] sum dim = 0 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that every axis of reduce_scatter must be an axis of its mesh, even
// when its result is shaped for the axis it meant.
func.func @no_such_axis(%t: tensor<8x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op axis 'db' is not an axis of mesh @world}}
  %0 = comm.reduce_scatter %t over @world ["db"] sum dim = 0 : tensor<8x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that reduce_scatter must not list an axis twice.
func.func @dont_repeat_axis(%t: tensor<8x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op axis 'dp' is listed twice}}
  %0 = comm.reduce_scatter %t over @world ["dp", "dp"] sum dim = 0 : tensor<8x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter dim must be below the operand rank.
func.func @no_dim_past_rank(%t: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op dim 2 is out of range for rank 2}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 2 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter dim must not be negative.
func.func @no_negative_dim(%t: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op dim -1 is out of range for rank 2}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = -1 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that reduce_scatter on a rank-0 tensor has no dim to scatter.
func.func @no_scalar(%t: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'comm.reduce_scatter' op dim 0 is out of range for rank 0}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the group size must divide the scattered dimension.
func.func @no_uneven_split(%t: tensor<6x8xf32>) -> tensor<1x8xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op dimension 0 of size 6 is not divisible by the group size 4}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<6x8xf32> -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

comm.mesh @grid shape = [2, 3] axes = ["dp", "tp"]

// Tests that the group size is the size of the named axes only: 3 along
// "tp" of a 2x3 mesh, which does not divide 8 (the mesh size 6 does not
// matter, nor does 2 along "dp").
func.func @no_uneven_split_on_grid(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op dimension 0 of size 8 is not divisible by the group size 3}}
  %0 = comm.reduce_scatter %t over @grid ["tp"] sum dim = 0 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter result divides dim by the group size.
func.func @no_wrong_result_shape(%t: tensor<8x6xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op result type 'tensor<4x6xf32>' does not match 'tensor<2x6xf32>'}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<8x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter result scatters dim, not another dimension.
func.func @no_wrong_dim_scattered(%t: tensor<8x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op result type 'tensor<2x8xf32>' does not match 'tensor<8x2xf32>'}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 1 : tensor<8x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter result keeps the operand rank.
func.func @no_rank_change(%t: tensor<8x6xf32>) -> tensor<12xf32> {
  // expected-error@+1 {{'comm.reduce_scatter' op result type 'tensor<12xf32>' does not match 'tensor<2x6xf32>'}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<8x6xf32> -> tensor<12xf32>
  return %0 : tensor<12xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the reduce_scatter result keeps the element type.
func.func @no_element_type_change(%t: tensor<8x6xf32>) -> tensor<2x6xf64> {
  // expected-error@+1 {{'comm.reduce_scatter' op result type 'tensor<2x6xf64>' does not match 'tensor<2x6xf32>'}}
  %0 = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<8x6xf32> -> tensor<2x6xf64>
  return %0 : tensor<2x6xf64>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that reduce_scatter mean needs a float element type.
func.func @no_mean_of_ints(%t: tensor<8xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{'comm.reduce_scatter' op mean needs a float element type}}
  %0 = comm.reduce_scatter %t over @world ["dp"] mean dim = 0 : tensor<8xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

//===----------------------------------------------------------------------===//
// comm.all_gather
//===----------------------------------------------------------------------===//

// Tests that all_gather must name an existing mesh, even when its result is
// shaped for the mesh it meant.
func.func @no_mesh(%t: tensor<2x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op 'world' does not name a comm.mesh}}
  %0 = comm.all_gather %t over @world ["dp"] dim = 0 : tensor<2x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that all_gather needs at least one axis.
func.func @no_axes(%t: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op expects at least one axis}}
  %0 = comm.all_gather %t over @world [] dim = 0 : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that every axis of all_gather must be an axis of its mesh, even when
// its result is shaped for the axis it meant.
func.func @no_such_axis(%t: tensor<2x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op axis 'db' is not an axis of mesh @world}}
  %0 = comm.all_gather %t over @world ["db"] dim = 0 : tensor<2x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that all_gather must not list an axis twice.
func.func @dont_repeat_axis(%t: tensor<2x6xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op axis 'dp' is listed twice}}
  %0 = comm.all_gather %t over @world ["dp", "dp"] dim = 0 : tensor<2x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_gather dim must be below the operand rank.
func.func @no_dim_past_rank(%t: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op dim 2 is out of range for rank 2}}
  %0 = comm.all_gather %t over @world ["dp"] dim = 2 : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_gather dim must not be negative.
func.func @no_negative_dim(%t: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op dim -2 is out of range for rank 2}}
  %0 = comm.all_gather %t over @world ["dp"] dim = -2 : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_gather result multiplies dim by the group size (a
// result shaped like a reduce_scatter is rejected).
func.func @no_wrong_result_shape(%t: tensor<8x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'comm.all_gather' op result type 'tensor<2x6xf32>' does not match 'tensor<32x6xf32>'}}
  %0 = comm.all_gather %t over @world ["dp"] dim = 0 : tensor<8x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

comm.mesh @grid shape = [2, 3] axes = ["dp", "tp"]

// Tests that the all_gather group size is the size of the named axis (2
// along "dp" of a 2x3 mesh), not the whole mesh.
func.func @no_whole_mesh_gather(%t: tensor<2x6xf32>) -> tensor<2x36xf32> {
  // expected-error@+1 {{'comm.all_gather' op result type 'tensor<2x36xf32>' does not match 'tensor<2x12xf32>'}}
  %0 = comm.all_gather %t over @grid ["dp"] dim = 1 : tensor<2x6xf32> -> tensor<2x36xf32>
  return %0 : tensor<2x36xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the all_gather result keeps the element type.
func.func @no_element_type_change(%t: tensor<2xi32>) -> tensor<8xi64> {
  // expected-error@+1 {{'comm.all_gather' op result type 'tensor<8xi64>' does not match 'tensor<8xi32>'}}
  %0 = comm.all_gather %t over @world ["dp"] dim = 0 : tensor<2xi32> -> tensor<8xi64>
  return %0 : tensor<8xi64>
}

// -----

//===----------------------------------------------------------------------===//
// comm.broadcast
//===----------------------------------------------------------------------===//

// Tests that broadcast must name an existing mesh, even when its root is a
// rank of the mesh it meant.
func.func @no_mesh(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op 'world' does not name a comm.mesh}}
  %0 = comm.broadcast %t over @world ["dp"] root = 3 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that broadcast needs at least one axis.
func.func @no_axes(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op expects at least one axis}}
  %0 = comm.broadcast %t over @world [] root = 0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that every axis of broadcast must be an axis of its mesh, even when
// its root is a rank of the axis it meant.
func.func @no_such_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op axis 'db' is not an axis of mesh @world}}
  %0 = comm.broadcast %t over @world ["db"] root = 1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that broadcast must not list an axis twice.
func.func @dont_repeat_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op axis 'dp' is listed twice}}
  %0 = comm.broadcast %t over @world ["dp", "dp"] root = 0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the broadcast root must be below the group size.
func.func @no_root_past_group(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op root 4 is not a rank of a group of 4}}
  %0 = comm.broadcast %t over @world ["dp"] root = 4 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the broadcast root must not be negative.
func.func @no_negative_root(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op root -1 is not a rank of a group of 4}}
  %0 = comm.broadcast %t over @world ["dp"] root = -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @grid shape = [2, 3] axes = ["dp", "tp"]

// Tests that the broadcast group is the named axis (2 ranks along "dp" of a
// 2x3 mesh), so a root that is a rank of the whole mesh is rejected.
func.func @no_root_of_whole_mesh(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.broadcast' op root 2 is not a rank of a group of 2}}
  %0 = comm.broadcast %t over @grid ["dp"] root = 2 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that the broadcast result type must equal the operand type.
func.func @no_type_change(%t: tensor<8xf32>) -> tensor<8xi32> {
  // expected-error@+1 {{'comm.broadcast' op result type must equal the operand type}}
  %0 = "comm.broadcast"(%t) <{axes = ["dp"], mesh = @world, root = 0 : i64}> : (tensor<8xf32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Tests that a token must be waited (exactly once).
comm.mesh @world shape = [2] axes = ["dp"]
func.func @no_unwaited_token(%a: tensor<8xf32>) {
  // expected-error@+1 {{'comm.all_reduce_start' op token must be waited exactly once (it has 0 uses)}}
  %t, %f = comm.all_reduce_start %a over @world ["dp"] mean : tensor<8xf32>
  return
}

// -----

// Tests that the in-flight tensor may not be read before its wait.
comm.mesh @world shape = [2] axes = ["dp"]
func.func @no_use_before_wait(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.all_reduce_start' op the in-flight tensor may only be used by its comm.wait}}
  %t, %f = comm.all_reduce_start %a over @world ["dp"] mean : tensor<8xf32>
  %early = comm.all_reduce %f over @world ["dp"] sum : tensor<8xf32>
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that a wait pairs the token and in-flight tensor of one start.
comm.mesh @world shape = [2] axes = ["dp"]
func.func @no_mixed_pairs(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error@+1 {{'comm.all_reduce_start' op the in-flight tensor may only be used by its comm.wait}}
  %t0, %f0 = comm.all_reduce_start %a over @world ["dp"] mean : tensor<8xf32>
  %t1, %f1 = comm.all_reduce_start %a over @world ["dp"] mean : tensor<8xf32>
  %r0 = comm.wait %t0, %f1 : tensor<8xf32>
  %r1 = comm.wait %t1, %f0 : tensor<8xf32>
  return %r0, %r1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a reduce_scatter_start checks its in-flight shape like reduce_scatter.
comm.mesh @world shape = [2] axes = ["dp"]
func.func @no_bad_inflight(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'comm.reduce_scatter_start' op result type 'tensor<4x2xf32>' does not match 'tensor<2x2xf32>'}}
  %t, %f = comm.reduce_scatter_start %a over @world ["dp"] sum dim = 0 : tensor<4x2xf32> -> tensor<4x2xf32>
  %r = comm.wait %t, %f : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Tests that a wait needs the token and tensor of a *_start op.
func.func @no_foreign_token(%t: !comm.token, %f: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.wait' op token and in-flight tensor must come from the same *_start op}}
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// comm.group_rank
//===----------------------------------------------------------------------===//

// Tests that group_rank must name a comm.mesh.
func.func @rank_without_mesh() -> index {
  // expected-error@+1 {{'comm.group_rank' op 'world' does not name a comm.mesh}}
  %r = comm.group_rank @world ["dp"]
  return %r : index
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that group_rank needs at least one axis.
func.func @rank_no_axes() -> index {
  // expected-error@+1 {{'comm.group_rank' op expects at least one axis}}
  %r = comm.group_rank @world []
  return %r : index
}

// -----

comm.mesh @world shape = [4] axes = ["dp"]

// Tests that every axis of group_rank must be an axis of its mesh.
func.func @rank_no_such_axis() -> index {
  // expected-error@+1 {{'comm.group_rank' op axis 'tp' is not an axis of mesh @world}}
  %r = comm.group_rank @world ["tp"]
  return %r : index
}

// -----

comm.mesh @grid shape = [2, 2] axes = ["dp", "tp"]

// Tests that group_rank must not list an axis twice.
func.func @rank_repeat_axis() -> index {
  // expected-error@+1 {{'comm.group_rank' op axis 'dp' is listed twice}}
  %r = comm.group_rank @grid ["dp", "dp"]
  return %r : index
}

// -----

//===----------------------------------------------------------------------===//
// comm.transfer_start
//===----------------------------------------------------------------------===//

// Tests that source, destination and in-flight tensor have one type.
func.func @transfer_type(%a: tensor<8xf32>, %e: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.transfer_start' op failed to verify that all of {source, dest, inflight} have same type}}
  %t, %f = "comm.transfer_start"(%a, %e) {direction = "upload"} : (tensor<8xf32>, tensor<4xf32>) -> (!comm.token, tensor<8xf32>)
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that a transfer goes up or back.
func.func @transfer_direction(%a: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.transfer_start' op direction must be upload or offload, got 'sideways'}}
  %t, %f = comm.transfer_start %a into %e "sideways" : tensor<8xf32>
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that a transfer's token is waited.
func.func @transfer_unwaited(%a: tensor<8xf32>, %e: tensor<8xf32>) {
  // expected-error@+1 {{'comm.transfer_start' op token must be waited exactly once (it has 0 uses)}}
  %t, %f = comm.transfer_start %a into %e "offload" : tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// comm.fan_out
//===----------------------------------------------------------------------===//

// Tests that fan_out must name an existing mesh.
func.func @fan_out_no_mesh(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.fan_out' op 'world' does not name a comm.mesh}}
  %0 = comm.fan_out %t over @world ["tp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "tp"]

// Tests that fan_out needs at least one axis.
func.func @fan_out_no_axes(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.fan_out' op expects at least one axis}}
  %0 = comm.fan_out %t over @world [] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "tp"]

// Tests that every axis of fan_out must be an axis of its mesh.
func.func @fan_out_no_such_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.fan_out' op axis 'pp' is not an axis of mesh @world}}
  %0 = comm.fan_out %t over @world ["pp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "tp"]

// Tests that fan_out must not list an axis twice.
func.func @fan_out_repeated_axis(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.fan_out' op axis 'tp' is listed twice}}
  %0 = comm.fan_out %t over @world ["tp", "tp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "tp"]

// Tests that the result type of fan_out equals its operand type (generic
// form: the custom form prints one type).
func.func @fan_out_type(%t: tensor<8xf32>) -> tensor<8xf64> {
  // expected-error@+1 {{'comm.fan_out' op result type must equal the operand type}}
  %0 = "comm.fan_out"(%t) {mesh = @world, axes = ["tp"]} : (tensor<8xf32>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

//===----------------------------------------------------------------------===//
// comm.send and comm.recv
//===----------------------------------------------------------------------===//

// Tests that send must name an existing mesh.
func.func @send_no_mesh(%t: tensor<8xf32>) {
  // expected-error@+1 {{'comm.send' op 'world' does not name a comm.mesh}}
  comm.send %t over @world ["pp"] peer = 1 : tensor<8xf32>
  return
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "pp"]

// Tests that send needs at least one axis.
func.func @send_no_axes(%t: tensor<8xf32>) {
  // expected-error@+1 {{'comm.send' op expects at least one axis}}
  comm.send %t over @world [] peer = 1 : tensor<8xf32>
  return
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "pp"]

// Tests that every axis of recv must be an axis of its mesh.
func.func @recv_no_such_axis() -> tensor<8xf32> {
  // expected-error@+1 {{'comm.recv' op axis 'tp' is not an axis of mesh @world}}
  %0 = comm.recv over @world ["tp"] peer = -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "pp"]

// Tests that recv must not list an axis twice.
func.func @recv_repeated_axis() -> tensor<8xf32> {
  // expected-error@+1 {{'comm.recv' op axis 'pp' is listed twice}}
  %0 = comm.recv over @world ["pp", "pp"] peer = -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "pp"]

// Tests that a rank does not send to itself.
func.func @send_peer_zero(%t: tensor<8xf32>) {
  // expected-error@+1 {{'comm.send' op peer must not be 0}}
  comm.send %t over @world ["pp"] peer = 0 : tensor<8xf32>
  return
}

// -----

comm.mesh @world shape = [1, 4] axes = ["dp", "pp"]

// Tests that the peer of a recv lies within a group of 4 ranks.
func.func @recv_peer_outside(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.recv' op peer -4 is not a rank of a group of 4}}
  %0 = comm.recv over @world ["pp"] peer = -4 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// comm.shard
//===----------------------------------------------------------------------===//

// Tests that shard must name an existing mesh.
func.func @shard_no_mesh(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.shard' op 'world' does not name a comm.mesh}}
  %0 = comm.shard %t over @world ["tp"] dim = 0 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that shard needs at least one axis.
func.func @shard_no_axes(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.shard' op expects at least one axis}}
  %0 = comm.shard %t over @world [] dim = 0 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that every axis of shard must be an axis of its mesh.
func.func @shard_no_such_axis(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.shard' op axis 'pp' is not an axis of mesh @world}}
  %0 = comm.shard %t over @world ["pp"] dim = 0 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that shard must not list an axis twice.
func.func @shard_repeated_axis(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.shard' op axis 'tp' is listed twice}}
  %0 = comm.shard %t over @world ["tp", "tp"] dim = 0 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that the dimension of shard is one of the operand's.
func.func @shard_dim(%t: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.shard' op dim 1 is out of range for rank 1}}
  %0 = comm.shard %t over @world ["tp"] dim = 1 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that the sharded dimension divides by the group size.
func.func @shard_indivisible(%t: tensor<7xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'comm.shard' op dimension 0 of size 7 is not divisible by the group size 2}}
  %0 = comm.shard %t over @world ["tp"] dim = 0 : tensor<7xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that the result is the operand's part: the dimension divided by
// the group size, the element type kept.
func.func @shard_result(%t: tensor<8xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{'comm.shard' op result type 'tensor<4xf64>' does not match 'tensor<4xf32>'}}
  %0 = comm.shard %t over @world ["tp"] dim = 0 : tensor<8xf32> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

//===----------------------------------------------------------------------===//
// comm.unshard
//===----------------------------------------------------------------------===//

// Tests that unshard must name an existing mesh.
func.func @unshard_no_mesh(%t: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.unshard' op 'world' does not name a comm.mesh}}
  %0 = comm.unshard %t over @world ["tp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that unshard needs at least one axis.
func.func @unshard_no_axes(%t: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.unshard' op expects at least one axis}}
  %0 = comm.unshard %t over @world [] dim = 0 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that every axis of unshard must be an axis of its mesh.
func.func @unshard_no_such_axis(%t: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.unshard' op axis 'pp' is not an axis of mesh @world}}
  %0 = comm.unshard %t over @world ["pp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that unshard must not list an axis twice.
func.func @unshard_repeated_axis(%t: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.unshard' op axis 'tp' is listed twice}}
  %0 = comm.unshard %t over @world ["tp", "tp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that the dimension of unshard is one of the operand's.
func.func @unshard_dim(%t: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'comm.unshard' op dim 1 is out of range for rank 1}}
  %0 = comm.unshard %t over @world ["tp"] dim = 1 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]

// Tests that the result is the whole: the dimension times the group size.
func.func @unshard_result(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'comm.unshard' op result type 'tensor<4xf32>' does not match 'tensor<8xf32>'}}
  %0 = comm.unshard %t over @world ["tp"] dim = 0 : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
