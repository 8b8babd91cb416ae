SELECT id, i + u, d * 3, f / 7, CAST(s AS CHAR(3)), HEX(b), LENGTH(tx), DATE_ADD(dt, INTERVAL 1 DAY), da, j->'$.a', e, st, NOT bo FROM t ORDER BY id;
SELECT CAST('12.5' AS DECIMAL(5,1)), CAST(-1 AS UNSIGNED), CONVERT('abc', BINARY), 0x41 + 0, b'101';
SELECT * FROM t WHERE d > 1.5 AND f < 100 AND dt >= '2000-01-01' AND s IS NOT NULL;
