// fast_math_kernels.h: the sin/cos and exp kernels of fast_math.h, written
// once over a lane type (internal to fast_math*.cc).
//
// `Ops` supplies a float vector F, an int32 vector I and element-wise
// operations whose results are those of the IEEE single operations:
// Add/Sub/Mul (one rounding each, never fused: the files that instantiate
// these kernels are compiled with -ffp-contract=off), Min(a, b) = a < b ? a : b
// and Max(a, b) = a > b ? a : b (the x86 minps/maxps rules, NaN → b),
// Trunc(F) → I truncating toward zero (INT32_MIN when out of range or NaN, as
// cvttps2dq), bit casts, bitwise ops and masks (all ones / all zeros). Every
// lane goes through the same operation sequence, so the portable one-lane
// instantiation and the SIMD ones give the same bits.
#ifndef INVARIANT_CORE_ENCODERS_FAST_MATH_KERNELS_H_
#define INVARIANT_CORE_ENCODERS_FAST_MATH_KERNELS_H_

#include <cstdint>

namespace invariant::fast_math_internal {

template <class Ops>
inline typename Ops::F RoundNearest(typename Ops::F v) {  // ties to even, |v| < 2^22
  const typename Ops::F magic = Ops::Set(12582912.0f);    // 1.5 · 2^23
  return Ops::Sub(Ops::Add(v, magic), magic);
}

template <class Ops>
inline typename Ops::F Select(typename Ops::F mask, typename Ops::F if_true,
                              typename Ops::F if_false) {
  return Ops::Or(Ops::And(mask, if_true), Ops::AndNot(mask, if_false));
}

// Cody–Waite reduction by π/2 and the Cephes minimax polynomials.
template <class Ops>
inline void SinCos(typename Ops::F v, typename Ops::F* sin_out, typename Ops::F* cos_out) {
  using F = typename Ops::F;
  using I = typename Ops::I;
  const F max_quadrant = Ops::Set(4194304.0f);         // 2^22
  F q = Ops::Mul(v, Ops::Set(0.636619772367581343f));  // x · 2/π
  q = Ops::Min(Ops::Max(q, Ops::Sub(Ops::Set(0.0f), max_quadrant)), max_quadrant);
  q = RoundNearest<Ops>(q);
  const I quadrant = Ops::Trunc(q);
  // r = x − q·π/2 with π/2 split in three parts (Cephes DP1..DP3 doubled).
  F r = Ops::Sub(v, Ops::Mul(q, Ops::Set(1.5703125f)));
  r = Ops::Sub(r, Ops::Mul(q, Ops::Set(4.837512969970703125e-4f)));
  r = Ops::Sub(r, Ops::Mul(q, Ops::Set(7.54978995489188216e-8f)));
  const F z = Ops::Mul(r, r);
  // sin r = r + r·z·(s1 + z·(s2 + z·s3))
  F ps = Ops::Add(Ops::Set(8.3321608736e-3f), Ops::Mul(z, Ops::Set(-1.9515295891e-4f)));
  ps = Ops::Add(Ops::Set(-1.6666654611e-1f), Ops::Mul(z, ps));
  const F s = Ops::Add(r, Ops::Mul(Ops::Mul(r, z), ps));
  // cos r = 1 − z/2 + z²·(c1 + z·(c2 + z·c3))
  F pc = Ops::Add(Ops::Set(-1.388731625493765e-3f), Ops::Mul(z, Ops::Set(2.443315711809948e-5f)));
  pc = Ops::Add(Ops::Set(4.166664568298827e-2f), Ops::Mul(z, pc));
  const F c =
      Ops::Add(Ops::Sub(Ops::Set(1.0f), Ops::Mul(Ops::Set(0.5f), z)), Ops::Mul(Ops::Mul(z, z), pc));
  const I one = Ops::SetI(1);
  const I two = Ops::SetI(2);
  const F odd = Ops::AsFloat(Ops::CmpEqI(Ops::AndI(quadrant, one), one));
  const F sin_sign = Ops::AsFloat(Ops::Shl30(Ops::AndI(quadrant, two)));
  const F cos_sign = Ops::AsFloat(Ops::Shl30(Ops::AndI(Ops::AddI(quadrant, one), two)));
  *sin_out = Ops::Xor(Select<Ops>(odd, c, s), sin_sign);
  *cos_out = Ops::Xor(Select<Ops>(odd, s, c), cos_sign);
}

template <class Ops>
inline typename Ops::F Exp(typename Ops::F raw) {
  using F = typename Ops::F;
  using I = typename Ops::I;
  const F low = Ops::Set(-87.0f);
  const F v = Ops::Min(Ops::Max(raw, low), Ops::Set(88.0f));
  const F k = RoundNearest<Ops>(Ops::Mul(v, Ops::Set(1.44269504088896341f)));
  F r = Ops::Sub(v, Ops::Mul(k, Ops::Set(0.693359375f)));
  r = Ops::Sub(r, Ops::Mul(k, Ops::Set(-2.12194440e-4f)));
  const F z = Ops::Mul(r, r);
  F p = Ops::Add(Ops::Mul(Ops::Set(1.9875691500e-4f), r), Ops::Set(1.3981999507e-3f));
  p = Ops::Add(Ops::Mul(p, r), Ops::Set(8.3334519073e-3f));
  p = Ops::Add(Ops::Mul(p, r), Ops::Set(4.1665795894e-2f));
  p = Ops::Add(Ops::Mul(p, r), Ops::Set(1.6666665459e-1f));
  p = Ops::Add(Ops::Mul(p, r), Ops::Set(5.0000001201e-1f));
  p = Ops::Add(Ops::Add(Ops::Mul(p, z), r), Ops::Set(1.0f));
  const I bits = Ops::Shl23(Ops::AddI(Ops::Trunc(k), Ops::SetI(127)));
  const F e = Ops::Mul(p, Ops::AsFloat(bits));
  return Ops::AndNot(Ops::CmpLt(raw, low), e);  // below −87: exactly 0
}

// The array drivers: full vectors, then the tail padded with zeros, so a
// value's result never depends on its position or the array length.
template <class Ops>
inline void SinCosArray(int64_t n, const float* x, float* sin_out, float* cos_out) {
  constexpr int kW = Ops::kLanes;
  int64_t i = 0;
  typename Ops::F s, c;
  for (; i + kW <= n; i += kW) {
    SinCos<Ops>(Ops::Load(x + i), &s, &c);
    Ops::Store(sin_out + i, s);
    Ops::Store(cos_out + i, c);
  }
  if (i < n) {
    float in[kW] = {}, so[kW], co[kW];
    for (int64_t t = i; t < n; ++t) in[t - i] = x[t];
    SinCos<Ops>(Ops::Load(in), &s, &c);
    Ops::Store(so, s);
    Ops::Store(co, c);
    for (int64_t t = i; t < n; ++t) {
      sin_out[t] = so[t - i];
      cos_out[t] = co[t - i];
    }
  }
}

template <class Ops>
inline void ExpArray(int64_t n, const float* x, float* out) {
  constexpr int kW = Ops::kLanes;
  int64_t i = 0;
  for (; i + kW <= n; i += kW) Ops::Store(out + i, Exp<Ops>(Ops::Load(x + i)));
  if (i < n) {
    float buf[kW] = {};
    for (int64_t t = i; t < n; ++t) buf[t - i] = x[t];
    Ops::Store(buf, Exp<Ops>(Ops::Load(buf)));
    for (int64_t t = i; t < n; ++t) out[t] = buf[t - i];
  }
}

}  // namespace invariant::fast_math_internal

#endif  // INVARIANT_CORE_ENCODERS_FAST_MATH_KERNELS_H_
