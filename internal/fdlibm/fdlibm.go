// Package fdlibm computes sine, cosine and tangent bit for bit as V8 does: V8's Math.sin,
// Math.cos and Math.tan are ports of fdlibm 5.3 (src/base/ieee754.cc), which Go's math
// package is not (math.Sin differs from V8 in the last bit for about one input in four). A
// program that prints or compares these results sees what it would see in Node.
//
// Arguments past 2^19·π/2 in magnitude, which fdlibm reduces with a multi-precision π
// (__kernel_rem_pio2), fall back to Go's math package and may differ from V8 in the last bit.
//
// Every product that is then added is converted explicitly, so that no platform fuses it
// into a multiply-add and rounds differently from fdlibm.
package fdlibm

import "math"

func hi(x float64) int32  { return int32(math.Float64bits(x) >> 32) }
func lo(x float64) uint32 { return uint32(math.Float64bits(x)) }

// withLo returns x with its low word set to l.
func withLo(x float64, l uint32) float64 {
	return math.Float64frombits(math.Float64bits(x)&^0xffffffff | uint64(l))
}

// mediumLimit is the high word of 2^19·π/2: fdlibm's medium-size reduction covers below it.
const mediumLimit = 0x413921fb

// Sin is V8's Math.sin.
func Sin(x float64) float64 {
	ix := hi(x) & 0x7fffffff
	switch {
	case ix <= 0x3fe921fb:
		return kernelSin(x, 0, 0)
	case ix >= 0x7ff00000:
		return x - x // NaN
	case ix > mediumLimit:
		return math.Sin(x)
	}
	n, y0, y1 := remPio2(x)
	return sinQuadrant(n, y0, y1)
}

// sinQuadrant is the sine of n·π/2 + y0 + y1, from the kernels on |y0 + y1| <= π/4.
func sinQuadrant(n int32, y0, y1 float64) float64 {
	switch n & 3 {
	case 0:
		return kernelSin(y0, y1, 1)
	case 1:
		return kernelCos(y0, y1)
	case 2:
		return -kernelSin(y0, y1, 1)
	default:
		return -kernelCos(y0, y1)
	}
}

// Cos is V8's Math.cos.
func Cos(x float64) float64 {
	ix := hi(x) & 0x7fffffff
	switch {
	case ix <= 0x3fe921fb:
		return kernelCos(x, 0)
	case ix >= 0x7ff00000:
		return x - x
	case ix > mediumLimit:
		return math.Cos(x)
	}
	n, y0, y1 := remPio2(x)
	return sinQuadrant(n+1, y0, y1) // cos t = sin(t + π/2)
}

// Tan is V8's Math.tan.
func Tan(x float64) float64 {
	ix := hi(x) & 0x7fffffff
	switch {
	case ix <= 0x3fe921fb:
		return kernelTan(x, 0, 1)
	case ix >= 0x7ff00000:
		return x - x
	case ix > mediumLimit:
		return math.Tan(x)
	}
	n, y0, y1 := remPio2(x)
	return kernelTan(y0, y1, 1-int32((n&1)<<1))
}

const (
	invpio2 = 6.36619772367581382433e-01 // 0x3FE45F30, 0x6DC9C883
	pio2_1  = 1.57079632673412561417e+00 // 0x3FF921FB, 0x54400000
	pio2_1t = 6.07710050650619224932e-11 // 0x3DD0B461, 0x1A626331
	pio2_2  = 6.07710050630396597660e-11 // 0x3DD0B461, 0x1A600000
	pio2_2t = 2.02226624879595063154e-21 // 0x3BA3198A, 0x2E037073
	pio2_3  = 2.02226624871116645580e-21 // 0x3BA3198A, 0x2E000000
	pio2_3t = 8.47842766036889956997e-32 // 0x397B839A, 0x252049C1
)

// remPio2 is __ieee754_rem_pio2 for |x| up to 2^19·π/2: x = n·π/2 + y0 + y1.
func remPio2(x float64) (n int32, y0, y1 float64) {
	hx := hi(x)
	ix := hx & 0x7fffffff
	if ix < 0x4002d97c { // |x| < 3π/4: n = ±1
		if hx > 0 {
			z := x - pio2_1
			if ix != 0x3ff921fb {
				y0 = z - pio2_1t
				y1 = (z - y0) - pio2_1t
			} else { // near π/2: 33+33+53 bits of π
				z -= pio2_2
				y0 = z - pio2_2t
				y1 = (z - y0) - pio2_2t
			}
			return 1, y0, y1
		}
		z := x + pio2_1
		if ix != 0x3ff921fb {
			y0 = z + pio2_1t
			y1 = (z - y0) + pio2_1t
		} else {
			z += pio2_2
			y0 = z + pio2_2t
			y1 = (z - y0) + pio2_2t
		}
		return -1, y0, y1
	}
	t := math.Abs(x)
	n = int32(float64(t*invpio2) + 0.5)
	fn := float64(n)
	r := t - float64(fn*pio2_1)
	w := float64(fn * pio2_1t) // first round, good to 85 bits
	j := ix >> 20
	y0 = r - w
	if i := j - ((hi(y0) >> 20) & 0x7ff); i > 16 { // second round, good to 118 bits
		t = r
		w = float64(fn * pio2_2)
		r = t - w
		w = float64(fn*pio2_2t) - ((t - r) - w)
		y0 = r - w
		if i := j - ((hi(y0) >> 20) & 0x7ff); i > 49 { // third round, 151 bits
			t = r
			w = float64(fn * pio2_3)
			r = t - w
			w = float64(fn*pio2_3t) - ((t - r) - w)
			y0 = r - w
		}
	}
	y1 = (r - y0) - w
	if hx < 0 {
		return -n, -y0, -y1
	}
	return n, y0, y1
}

const (
	s1 = -1.66666666666666324348e-01 // 0xBFC55555, 0x55555549
	s2 = 8.33333333332248946124e-03  // 0x3F811111, 0x1110F8A6
	s3 = -1.98412698298579493134e-04 // 0xBF2A01A0, 0x19C161D5
	s4 = 2.75573137070700676789e-06  // 0x3EC71DE3, 0x57B1FE7D
	s5 = -2.50507602534068634195e-08 // 0xBE5AE5E6, 0x8A2B9CEB
	s6 = 1.58969099521155010221e-10  // 0x3DE5D93A, 0x5ACFD57C
)

// kernelSin is __kernel_sin on [-π/4, π/4]: x + y is the argument, y its tail; iy = 0 when
// y is zero.
func kernelSin(x, y float64, iy int) float64 {
	if ix := hi(x) & 0x7fffffff; ix < 0x3e400000 && int(x) == 0 { // |x| < 2^-27
		return x
	}
	z := float64(x * x)
	v := float64(z * x)
	r := s2 + float64(z*(s3+float64(z*(s4+float64(z*(s5+float64(z*s6)))))))
	if iy == 0 {
		return x + float64(v*(s1+float64(z*r)))
	}
	return x - ((float64(z*(float64(0.5*y)-float64(v*r))) - y) - float64(v*s1))
}

const (
	c1 = 4.16666666666666019037e-02  // 0x3FA55555, 0x5555554C
	c2 = -1.38888888888741095749e-03 // 0xBF56C16C, 0x16C15177
	c3 = 2.48015872894767294178e-05  // 0x3EFA01A0, 0x19CB1590
	c4 = -2.75573143513906633035e-07 // 0xBE927E4F, 0x809C52AD
	c5 = 2.08757232129817482790e-09  // 0x3E21EE9E, 0xBDB4B1C4
	c6 = -1.13596475577881948265e-11 // 0xBDA8FAE9, 0xBE8838D4
)

// kernelCos is __kernel_cos on [-π/4, π/4].
func kernelCos(x, y float64) float64 {
	ix := hi(x) & 0x7fffffff
	if ix < 0x3e400000 && int(x) == 0 { // |x| < 2^-27
		return 1
	}
	z := float64(x * x)
	r := float64(z * (c1 + float64(z*(c2+float64(z*(c3+float64(z*(c4+float64(z*(c5+float64(z*c6)))))))))))
	if ix < 0x3fd33333 { // |x| < 0.3
		return 1 - (float64(0.5*z) - (float64(z*r) - float64(x*y)))
	}
	var qx float64
	if ix > 0x3fe90000 { // |x| > 0.78125
		qx = 0.28125
	} else {
		qx = math.Float64frombits(uint64(uint32(ix-0x00200000)) << 32) // |x|/4
	}
	hz := float64(0.5*z) - qx
	a := 1 - qx
	return a - (hz - (float64(z*r) - float64(x*y)))
}

var tanT = [...]float64{
	3.33333333333334091986e-01,  // 3FD55555, 55555563
	1.33333333333201242699e-01,  // 3FC11111, 1110FE7A
	5.39682539762260521377e-02,  // 3FABA1BA, 1BB341FE
	2.18694882948595424599e-02,  // 3F9664F4, 8406D637
	8.86323982359930005737e-03,  // 3F8226E3, E96E8493
	3.59207910759131235356e-03,  // 3F6D6D22, C9560328
	1.45620945432529025516e-03,  // 3F57DBC8, FEE08315
	5.88041240820264096874e-04,  // 3F4344D8, F2F26501
	2.46463134818469906812e-04,  // 3F3026F7, 1A8D1068
	7.81794442939557092300e-05,  // 3F147E88, A03792A6
	7.14072491382608190305e-05,  // 3F12B80F, 32F0A7E9
	-1.85586374855275456654e-05, // BEF375CB, DB605373
	2.59073051863633712884e-05,  // 3EFB2A70, 74BF7AD4
}

const (
	pio4   = 7.85398163397448278999e-01 // 3FE921FB, 54442D18
	pio4lo = 3.06161699786838301793e-17 // 3C81A626, 33145C07
)

// kernelTan is __kernel_tan on [-π/4, π/4]: tan(x + y) when iy is 1, -1/tan(x + y) when it
// is -1.
func kernelTan(x, y float64, iy int32) float64 {
	T := &tanT
	hx := hi(x)
	ix := hx & 0x7fffffff
	if ix < 0x3e300000 && int(x) == 0 { // |x| < 2^-28
		if (uint32(ix)|lo(x))|uint32(iy+1) == 0 {
			return 1 / math.Abs(x)
		}
		if iy == 1 {
			return x
		}
		// -1 / (x + y), carefully
		w := x + y
		z := withLo(w, 0)
		v := y - (z - x)
		a := -1 / w
		t := withLo(a, 0)
		s := 1 + float64(t*z)
		return t + float64(a*(s+float64(t*v)))
	}
	big := ix >= 0x3fe59428 // |x| >= 0.6744
	if big {
		if hx < 0 {
			x, y = -x, -y
		}
		z := pio4 - x
		w := pio4lo - y
		x = z + w
		y = 0
	}
	z := float64(x * x)
	w := float64(z * z)
	r := T[1] + float64(w*(T[3]+float64(w*(T[5]+float64(w*(T[7]+float64(w*(T[9]+float64(w*T[11])))))))))
	v := float64(z * (T[2] + float64(w*(T[4]+float64(w*(T[6]+float64(w*(T[8]+float64(w*(T[10]+float64(w*T[12])))))))))))
	s := float64(z * x)
	r = y + float64(z*(float64(s*(r+v))+y))
	r += float64(T[0] * s)
	w = x + r
	if big {
		v = float64(iy)
		return float64(1-((hx>>30)&2)) * (v - float64(2.0*(x-(float64(w*w)/(w+v)-r))))
	}
	if iy == 1 {
		return w
	}
	// -1 / (x + r), accurately
	z = withLo(w, 0)
	v = r - (z - x)
	a := -1 / w
	t := withLo(a, 0)
	s = 1 + float64(t*z)
	return t + float64(a*(s+float64(t*v)))
}
