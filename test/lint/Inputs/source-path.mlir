// The test that test/lint/source-path.test runs by its source path.
// RUN: loom-opt %s | FileCheck %s
// CHECK: func.func @f
func.func @f() {
  return
}
