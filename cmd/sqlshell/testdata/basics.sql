-- Types, NULLs, errors after the first statements: the script stops at
-- the first error and names its line.
CREATE TABLE items (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(20) NOT NULL,
  price DECIMAL(6,2),
  added DATE,
  tags SET('new','sale'),
  data JSON,
  raw VARBINARY(4)
);
INSERT INTO items (name, price, added, tags, data, raw) VALUES
  ('pen', 1.5, '2024-01-02', 'new', '{"colour": "blue"}', x'00ff'),
  ('book; with semicolon', 12, NULL, 'new,sale', NULL, 'ab'),
  ('bag', NULL, '2024-03-04', '', '[1, 2]', NULL);
SELECT * FROM items ORDER BY id;
SELECT name, price * 2 AS double_price FROM items WHERE price IS NOT NULL ORDER BY id\G
UPDATE items SET price = 2 WHERE name = 'pen';
SELECT COUNT(*), SUM(price) FROM items;
/* a block comment; with a semicolon */
SELECT 'tab	and\\backslash' AS s;
SELECT nope FROM items;
SELECT 'never reached';
