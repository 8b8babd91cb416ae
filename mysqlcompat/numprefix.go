package mysqlcompat

// Numbers at the start of strings
//
// MySQL reads a string stored in, or compared with, a number by its
// longest prefix that is one: white space (space, tab, newline, vertical
// tab, form feed, carriage return: the bytes its character sets class as
// spaces), a sign, digits with an optional fraction, and an exponent when
// digits follow its 'e'. For an INT, DECIMAL or DOUBLE column a string
// without such a prefix is 0 with 1366 ("Incorrect integer value"), one
// with more than white space after it the number with 1265 ("Data
// truncated"), and nothing else warns ("5." and trailing white space
// included). Every reader of such strings here (the values adjusted out of
// strict mode, INSERT's errors, hash-join keys) scans with numberPrefix, so
// they agree on each string.

// numberSpace reports whether c is white space MySQL skips around a number.
func numberSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// numberPrefix returns the number at the start of s, without the white
// space before it ("5." and "5.e1" included: decimal.NewFromString and
// strconv.ParseFloat read them), and what follows it; ok is false, and
// rest s, when s starts with no number.
func numberPrefix(s string) (num, rest string, ok bool) {
	i := 0
	for i < len(s) && numberSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", s, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return s[start:i], s[i:], true
}

// onlySpace reports whether s holds nothing but white space: what follows
// a number without truncating it.
func onlySpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if !numberSpace(s[i]) {
			return false
		}
	}
	return true
}

// Number-prefix codes: what storing a string in an INT, DECIMAL or DOUBLE
// column warns out of strict mode (and fails with in it), range aside.
const (
	prefixWhole     = 0    // the string is a number
	prefixTruncated = 1265 /* mysql.ERWarnDataTruncated */ // a number, then more
	prefixNone      = 1366 /* mysql.ERTruncatedWrongValueForField */
)

// numberPrefixCode returns the number s is read as and the code storing it
// gives (above).
func numberPrefixCode(s string) (num string, code int) {
	num, rest, ok := numberPrefix(s)
	switch {
	case !ok:
		return "0", prefixNone
	case !onlySpace(rest):
		return num, prefixTruncated
	}
	return num, prefixWhole
}
