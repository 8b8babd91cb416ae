WITH big AS (SELECT id, i FROM t WHERE i > 1), small AS (SELECT id FROM t WHERE i <= 1)
SELECT big.id, (SELECT COUNT(*) FROM small) FROM big ORDER BY big.id;
SELECT CASE WHEN i > 3 THEN 'big' WHEN i IS NULL THEN 'none' ELSE 'small' END AS size, COUNT(*) FROM t GROUP BY size;
