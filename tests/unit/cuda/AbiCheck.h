//===- AbiCheck.h - Our declarations of a C API against its header -*- C++ -*-===//
//
// modelc calls CUDA libraries through its own declarations (DriverApi.h,
// CublasLtApi.h), since it neither links them nor needs their headers to
// build. Compatible<F, G> says at compile time whether two function pointer
// types can call the same function: same arity, and per parameter and result
// the same size and kind (integer or enum, floating point, pointer; pointers
// to scalars recursively, pointers to structs or opaque types alike).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_TESTS_UNIT_CUDA_ABICHECK_H
#define MODELC_TESTS_UNIT_CUDA_ABICHECK_H

#include <type_traits>

namespace modelc::test {

template <typename T>
constexpr bool isScalar = std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>;

template <typename A, typename B> constexpr bool sameShape() {
  if constexpr (sizeof(A) != sizeof(B) || std::is_pointer_v<A> != std::is_pointer_v<B> ||
                (std::is_integral_v<A> || std::is_enum_v<A>) !=
                    (std::is_integral_v<B> || std::is_enum_v<B>))
    return false;
  else if constexpr (std::is_pointer_v<A>) {
    using PA = std::remove_cv_t<std::remove_pointer_t<A>>;
    using PB = std::remove_cv_t<std::remove_pointer_t<B>>;
    if constexpr (isScalar<PA> && isScalar<PB>)
      return sameShape<PA, PB>();
    else
      return isScalar<PA> == isScalar<PB>;
  } else
    return true;
}

template <typename... A> struct Types {};

template <typename... A, typename... B> constexpr bool sameParameters(Types<A...>, Types<B...>) {
  if constexpr (sizeof...(A) != sizeof...(B))
    return false;
  else
    return (sameShape<A, B>() && ...);
}

template <typename F, typename G> struct Compatible : std::false_type {};
template <typename R, typename... A, typename S, typename... B>
struct Compatible<R (*)(A...), S (*)(B...)>
    : std::bool_constant<sameShape<R, S>() && sameParameters(Types<A...>{}, Types<B...>{})> {};

} // namespace modelc::test

#endif // MODELC_TESTS_UNIT_CUDA_ABICHECK_H
