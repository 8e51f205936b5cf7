// Per-sample cost formulas of the layer kinds, shared by the kernel-backed layers (layers.cpp) and the
// modeled model zoo (zoo_modeled.cpp), so that a layer costs the same whichever describes it.
// Conventions: a multiply-add is 2 flops; 4 bytes per float; `bwd` false means no backward runs at all
// (nothing trainable at or before the layer); `need_dinp` false skips the data gradient (the first
// trainable layer). Each function returns the LayerCost of kernels/model/network.hpp.
// Kernel launches per pass are Caffe's with cuDNN (the papers' framework; BVLC/caffe src/caffe/layers/*.cu): a
// convolution or inner product launches its GEMM and a bias kernel forward (one GEMM call), and the bias, weight
// and data gradients backward (two GEMM calls); pooling and element-wise layers one kernel each way (max
// pooling two backward), dropout two forward (cuRAND's mask, then the product).
#pragma once

#include <string>

#include "kernels/model/network.hpp"

namespace dts::model::cost {

// Linear (C -> OC) and convolution (M = OC*OH*OW outputs, each a dot product of length C/groups*KH*KW, so
// mac = M*C/groups*KH*KW; a linear layer is the case M = OC, KH = KW = 1):
//   fwd_flops = 2*mac + M (bias)             fwd_bytes = 4 * (in + out)          read input, write output
//   bwd_flops = 2*mac (weight grad) + M (bias grad) [+ 2*mac data grad]
//   bwd_bytes = 4 * (out + in) [+ 4 * in]    read dout and the input, [write dinp]
//   param_bytes = 4 * (weights + biases).
// The backward is thus twice the forward, less the data gradient of the first trainable layer.
LayerCost gemm(const std::string& name, double mac, double in, double out, double params, bool need_dinp, bool bwd);

// Max or average pooling, `win` = window elements: fwd win reads/compares (or adds) per output; bytes input +
// output (+ an int32 argmax for max). bwd: max scatters one value per output, avg spreads each output over
// the window; bytes dout + dinp (+ argmax).
LayerCost pool(const std::string& name, double in, double out, double win, bool max, bool bwd);

// An elementwise op over n values per sample: `flops_fwd`/`flops_bwd` flops per value, `tensors_fwd` /
// `tensors_bwd` n-float tensors moved (ReLU: 2 and 3 tensors, dropout: 3 and 3, 1 flop per value each way).
// `kernels_fwd` / `kernels_bwd`: the kernels launched each way.
LayerCost elementwise(const std::string& name, double n, double tensors_fwd, double tensors_bwd, bool bwd,
                      double flops_fwd = 1, double flops_bwd = 1, double kernels_fwd = 1, double kernels_bwd = 1);

// Mean softmax cross-entropy over K logits: fwd ~5 flops per logit (max, subtract, exp, sum, log), reads
// logits, writes probs; bwd 2 flops per logit, reads probs, writes dlogits. Caffe's SoftmaxWithLoss launches the
// softmax, the loss, its sum and the loss weight's dot forward, the gradient and its scaling backward.
LayerCost softmax_xent(const std::string& name, double K);

}  // namespace dts::model::cost
