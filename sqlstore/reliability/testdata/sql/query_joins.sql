SELECT t.id, p.note FROM t LEFT JOIN p ON p.tid = t.id WHERE t.id < 5 ORDER BY t.id, p.id;
SELECT a.id, b.id FROM t a JOIN t b ON a.i = b.i + 1;
SELECT * FROM t WHERE id IN (SELECT tid FROM p) AND EXISTS (SELECT 1 FROM k WHERE k.a = t.id);
SELECT s FROM t UNION SELECT b FROM k ORDER BY 1 LIMIT 5;
