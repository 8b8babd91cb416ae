INSERT INTO k VALUES (5, 'five'), (5, 'five'), (6, 'six');
UPDATE k SET b = 'cinq' WHERE a = 5 LIMIT 1;
DELETE FROM k WHERE b = 'six';
SELECT a, b FROM k WHERE b LIKE 'c%' OR a > 4 ORDER BY a, b;
