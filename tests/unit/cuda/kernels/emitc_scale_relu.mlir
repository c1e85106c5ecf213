// The EmitC source of emitc_scale_relu.cu (mlir-translate --mlir-to-cpp).
emitc.include <"stdint.h">
emitc.func @emitc_scale_relu(%in: !emitc.ptr<f32>, %out: !emitc.ptr<f32>, %n: i32, %alpha: f32) attributes {specifiers = ["extern \"C\" __global__"]} {
  %bid = emitc.literal "blockIdx.x" : ui32
  %bdim = emitc.literal "blockDim.x" : ui32
  %tid = emitc.literal "threadIdx.x" : ui32
  %0 = emitc.mul %bid, %bdim : (ui32, ui32) -> ui32
  %1 = emitc.add %0, %tid : (ui32, ui32) -> ui32
  %i = emitc.cast %1 : ui32 to i32
  %c = emitc.cmp lt, %i, %n : (i32, i32) -> i1
  emitc.if %c {
    %p = emitc.subscript %in[%i] : (!emitc.ptr<f32>, i32) -> !emitc.lvalue<f32>
    %x = emitc.load %p : <f32>
    %y = emitc.mul %x, %alpha : (f32, f32) -> f32
    %zero = "emitc.constant"() <{value = 0.0 : f32}> : () -> f32
    %r = emitc.call_opaque "fmaxf"(%y, %zero) : (f32, f32) -> f32
    %q = emitc.subscript %out[%i] : (!emitc.ptr<f32>, i32) -> !emitc.lvalue<f32>
    emitc.assign %r : f32 to %q : <f32>
  }
  emitc.return
}
