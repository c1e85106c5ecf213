# Lit features for tests that need the CUDA toolkit or a host compiler:
# `nvrtc` (libnvrtc found), `ptxas` (with %ptxas) and `host-cxx` (a C++
# compiler for the emulator, with %host-cxx). Tests say REQUIRES and lit
# reports them UNSUPPORTED, by name, where one is missing. Run by the
# lit.local.cfg of the folders that need them.
import glob
import os
import shutil

cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
lib_dirs = [os.path.join(cuda_home, "lib64"), "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"]
if any(glob.glob(os.path.join(d, "libnvrtc.so.1[23]*")) for d in lib_dirs):
    config.available_features.add("nvrtc")

ptxas = shutil.which("ptxas", path=os.pathsep.join(
    [os.path.join(cuda_home, "bin"), "/usr/local/cuda/bin", os.environ.get("PATH", "")]))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

cxx = shutil.which(os.environ.get("MODELC_HOST_CXX", "c++")) or shutil.which("g++") \
    or shutil.which("clang++")
if cxx:
    config.available_features.add("host-cxx")
    config.substitutions.append(("%host-cxx", cxx))
